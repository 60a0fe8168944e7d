"""The study kit (cyclebench/study/): plots with labelled categories, and what every study shares."""
import pytest

from cyclebench.reports.model import Panel
from cyclebench.study.plots import grouped_bars, line


def test_grouped_bars_put_categories_on_the_axis():
    p = grouped_bars(Panel(), ["direct", "indirect", "table"], {"gcc": [1.0, 2.0, None], "clang": [1.5, 2.5, 3.5]})
    assert p.xticks == [(0, "direct"), (1, "indirect"), (2, "table")]
    gcc, clang = p.series
    assert gcc.kind == clang.kind == "bar" and gcc.y == [1.0, 2.0] and len(clang.x) == 3   # None: no bar
    assert all(a < b for a, b in zip(gcc.x, clang.x))                                     # side by side
    assert all(abs(x - round(x)) < 0.5 for x in gcc.x + clang.x)                          # within the group
    with pytest.raises(ValueError):
        grouped_bars(Panel(), ["a", "b"], {"s": [1.0]})


def test_a_line_leaves_out_missing_points_and_empty_lines():
    p = line(Panel(), "k", [(1, 2.0), (2, None), (4, 3.0)], marker="o")
    assert (p.series[0].x, p.series[0].y, p.series[0].style) == ([1, 4], [2.0, 3.0], {"marker": "o"})
    assert not line(Panel(), "none", [(1, None)]).series


def test_dispatch_figure_names_its_dispatchers_on_the_axis():
    from cyclebench.studies.dispatch.experiments import ONE_TARGET
    from cyclebench.studies.dispatch.plots import by_dispatcher
    from cyclebench.studies.dispatch.tables import ORDER
    v = {"fixed": {(b, d, ONE_TARGET[d]): {"iter": 1.0 + i} for b in ("gcc", "clang") for i, d in enumerate(ORDER)}}
    fig = by_dispatcher(v, ["gcc", "clang"], "cpu")
    (p,) = fig.panels
    labels = [t for _, t in p.xticks]
    assert len(labels) == len(ORDER) and labels[0].startswith("direct") and "=" not in p.title
    assert [s.label for s in p.series] == ["gcc", "clang"] and all(s.kind == "bar" for s in p.series)


def test_flat_rows_one_per_member_with_its_parameters():
    from cyclebench.study.outputs import flat
    group = {"experiment": "overhead", "routine": "kernels", "params": {"kernel": "sum", "builds": ["a", "b"]},
             "members": [{"build": "a", "result": {"x": 1}}, {"build": "b", "result": {"x": 2}}]}
    paged = {"experiment": "tree", "routine": "group", "params": {"members": [{}]},
             "members": [{"params": {"routine": "chase", "page": 4096}, "result": {"x": 3}}]}
    plain = {"experiment": "race", "routine": "race", "params": {"mode": "fn"}, "result": {"x": 4}}
    rows = flat([group, paged, plain], lambda res, rec: {"x": res["x"], "of": rec["experiment"]})
    assert rows == [
        {"experiment": "overhead", "routine": "kernels", "kernel": "sum", "build": "a", "x": 1, "of": "overhead"},
        {"experiment": "overhead", "routine": "kernels", "kernel": "sum", "build": "b", "x": 2, "of": "overhead"},
        {"experiment": "tree", "routine": "chase", "page": 4096, "x": 3, "of": "tree"},
        {"experiment": "race", "routine": "race", "mode": "fn", "x": 4, "of": "race"}]


@pytest.mark.parametrize("name", ["memset", "memory", "paging", "bounds", "dispatch"])
def test_every_study_takes_one_subset_option(name):
    from cyclebench.cli.study import study_parser
    from cyclebench.errors import UsageError
    from cyclebench.study import registry
    study = registry.get(name)
    full = study.configure(study_parser(study).parse_args([]))
    assert len(full.experiments) >= 3
    first, last = full.experiments[0], full.experiments[-1]
    cfg = study.configure(study_parser(study).parse_args(["--experiments", f"{first},{last}"]))
    assert cfg.experiments == (first, last)
    cfg = study.configure(study_parser(study).parse_args(["--experiments", f"{first.upper()},{last.title()}"]))
    assert cfg.experiments == (first, last)           # names in any case
    with pytest.raises(UsageError) as e:
        study.configure(study_parser(study).parse_args(["--experiments", "nope"]))
    assert "nope" in e.value.cause and first in e.value.hint and last in e.value.hint


@pytest.mark.parametrize("name,args,field,value", [
    ("dispatch", ["--quick", "--builds", "clang-retpoline"], "builds", ("clang-retpoline",)),
    ("paging", ["--no-instructions"], "count_instructions", False),
    ("memset", ["--kernels", "libc"], "kernels", ("libc",)),
    ("blocks", ["--quick", "--no-llvm-mca"], "predictors", ())])
def test_a_studys_own_options_change_its_preset(name, args, field, value):
    from cyclebench.cli.study import study_parser
    from cyclebench.study import registry
    study = registry.get(name)
    cfg = study.configure(study_parser(study).parse_args(args + ["-n", "3"]))
    assert getattr(cfg, field) == value and cfg.reps == 3
    assert cfg.name == ("quick" if "--quick" in args else "full")
    if name == "dispatch":
        assert cfg.pattern_builds == ("clang-retpoline",)


def test_parts_is_a_deprecated_spelling_that_still_works(capsys):
    from cyclebench.cli.study import study_parser
    from cyclebench.study import registry
    study = registry.get("bounds")
    cfg = study.configure(study_parser(study).parse_args(["--quick", "--parts", "overhead,race"]))
    assert cfg.experiments == ("overhead", "race") and cfg.name == "quick"
    assert "--parts is deprecated; use --experiments" in capsys.readouterr().err


def test_dispatch_plans_only_the_chosen_experiments():
    from cyclebench.studies.dispatch.config import QUICK
    from cyclebench.studies.dispatch.experiments import plan
    from dataclasses import replace
    built = {"clang-Os": None, "clang-retpoline": None}
    everything = {t.experiment for t in plan(QUICK, built)}
    assert everything == {"fixed", "pattern", "penalty"}
    assert {t.experiment for t in plan(replace(QUICK, experiments=("pattern",)), built)} == {"pattern"}


def test_dispatch_keys_carry_the_repetitions_and_calls():
    # a resume with another -n measures afresh instead of mixing two counts in one analysis
    from cyclebench.studies.dispatch.config import QUICK
    from cyclebench.studies.dispatch.experiments import plan
    from dataclasses import replace
    built = {"clang-Os": None, "clang-retpoline": None}
    keys = {t.key for t in plan(QUICK, built)}
    assert not keys & {t.key for t in plan(replace(QUICK, reps=QUICK.reps + 1), built)}
    assert not keys & {t.key for t in plan(replace(QUICK, fixed_calls=QUICK.fixed_calls * 2), built)
                       if t.experiment == "fixed"}


def test_the_other_subset_options_take_names_in_any_case():
    from cyclebench.cli.study import study_parser
    from cyclebench.errors import UsageError
    from cyclebench.study import registry
    dispatch, memset = registry.get("dispatch"), registry.get("memset")
    cfg = dispatch.configure(study_parser(dispatch).parse_args(["--builds", "CLANG-OS,clang-retpoline"]))
    assert cfg.builds == ("clang-Os", "clang-retpoline")
    cfg = memset.configure(study_parser(memset).parse_args(["--kernels", "LIBC,New_SSE"]))
    assert cfg.kernels == ("libc", "new_sse")
    with pytest.raises(UsageError):
        memset.configure(study_parser(memset).parse_args(["--kernels", "nope"]))
