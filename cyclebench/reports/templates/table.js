/* cyclebench report: filter, sort and row details for every table.data. Rows are rendered once
   by the server side; this only hides and reorders them (fast at 13,000 rows). */
(function () {
  "use strict";
  var NUM = /^[≤≥<>~]?\s*([-+]?[0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)/i;

  function sortKey(text) {
    var m = NUM.exec(text.trim());
    return m ? [0, parseFloat(m[1]), text] : [1, 0, text.toLowerCase()];
  }

  function compare(a, b) {
    if (a[0] !== b[0]) return a[0] - b[0];
    if (a[0] === 0 && a[1] !== b[1]) return a[1] - b[1];
    return a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0;
  }

  function setup(table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var text = rows.map(function (r) { return r.textContent.toLowerCase(); });
    var input = document.getElementById(table.dataset.filter);
    var count = document.getElementById(table.dataset.count);
    var panel = document.getElementById(table.id + "-detail");
    var details = table.dataset.details ?
      JSON.parse(document.getElementById(table.dataset.details).textContent) : [];
    var keys = {};

    input.addEventListener("input", function () {
      var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      for (var i = 0; i < rows.length; i++) {
        var ok = terms.every(function (t) { return text[i].indexOf(t) >= 0; });
        rows[i].hidden = !ok;
        if (ok) shown++;
      }
      count.textContent = shown + " of " + rows.length + " rows";
    });

    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () {
        var desc = th.classList.contains("asc");
        Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(desc ? "desc" : "asc");
        if (!keys[col]) keys[col] = rows.map(function (r) { return sortKey(r.cells[col].textContent); });
        var k = keys[col];
        var order = rows.map(function (_, i) { return i; });
        order.sort(function (a, b) { return (desc ? -1 : 1) * compare(k[a], k[b]) || a - b; });
        var frag = document.createDocumentFragment();
        order.forEach(function (i) { frag.appendChild(rows[i]); });
        body.appendChild(frag);
      });
    });

    body.addEventListener("click", function (ev) {
      var tr = ev.target.closest("tr");
      if (!tr || tr.dataset.i === undefined) return;
      var d = details[+tr.dataset.i] || {};
      var out = [];
      if (d.command) out.push("command:\n  " + d.command);
      if (d.code) out.push("code:\n  " + String(d.code).split("\n").join("\n  "));
      if (d.flags && d.flags.length) out.push("flags: " + d.flags.join(", "));
      (d.warnings || []).forEach(function (w) { out.push("warning: " + w); });
      panel.textContent = out.join("\n");
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.data"), setup);
  document.body.dataset.ready = "1";
})();
