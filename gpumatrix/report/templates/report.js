// gpumatrix HTML report: sort by any column, filter by status, open a cell's details.
// Plain ES5 so any browser runs it; no external code. Inlined into the page at render time.
(function () {
  "use strict";
  var errors = document.getElementById("gm-errors");
  window.addEventListener("error", function (ev) {
    var li = document.createElement("li");
    li.className = "gm-error";
    li.textContent = String(ev.message || ev.error);
    errors.appendChild(li);
  });
  var table = document.getElementById("gm-table");
  var heads = table.tHead.rows[table.tHead.rows.length - 1].cells;
  var body = table.tBodies[0];
  function value(row, col) {
    var cell = row.cells[col];
    var v = cell.getAttribute("data-sort");
    return v === null ? cell.textContent.trim() : v;
  }
  function compare(a, b) {
    var na = parseFloat(a), nb = parseFloat(b);
    if (!isNaN(na) && !isNaN(nb) && String(na) === a && String(nb) === b) { return na - nb; }
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  function sortBy(col, descending) {
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var c = compare(value(r1, col), value(r2, col));
      if (c === 0) { c = compare(value(r1, 0), value(r2, 0)); }
      return descending ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    heads[col].setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    th.title = "sort by " + th.getAttribute("data-name");
    th.addEventListener("click", function () {
      sortBy(col, th.getAttribute("aria-sort") === "ascending");
    });
  });
  // the status filter: show only the cells with an entry of the chosen status
  var filter = document.getElementById("gm-filter");
  var shown = document.getElementById("gm-shown");
  function applyFilter() {
    var want = filter.value, n = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var has = (" " + row.getAttribute("data-statuses") + " ").indexOf(" " + want + " ") >= 0;
      row.hidden = Boolean(want) && !has;
      if (!row.hidden) { n += 1; }
    });
    shown.textContent = "showing " + n + " of " + body.rows.length + " cells";
  }
  filter.addEventListener("change", applyFilter);
  var hash = window.location.hash;
  var m = /sort=(\d+)(-desc)?/.exec(hash);
  if (m && Number(m[1]) < heads.length) { sortBy(Number(m[1]), Boolean(m[2])); }
  var f = /status=([a-z_]+)/.exec(hash);
  if (f) { filter.value = f[1]; }
  applyFilter();
  // an entry links to its details: open them when followed
  function openTarget() {
    var target = window.location.hash.length > 1 && document.getElementById(window.location.hash.slice(1));
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  document.body.setAttribute("data-gm-ready", "ok");
})();
