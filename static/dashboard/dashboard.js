// Draws every <div data-chart="ID"> from the JSON in <script id="ID">, and makes tables sortable.
(function () {
  const config = {displaylogo: false, responsive: true, displayModeBar: false};  // drag zooms, double-click resets
  const base = {margin: {t: 70, r: 50, b: 50, l: 60}, height: 340, font: {size: 12},
                paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"};
  document.querySelectorAll("[data-chart]").forEach(function (el) {
    const spec = JSON.parse(document.getElementById(el.dataset.chart).textContent);
    Plotly.newPlot(el, spec.data, Object.assign({}, base, spec.layout), config);
  });

  document.querySelectorAll("table.sortable th[data-sort]").forEach(function (th) {
    th.addEventListener("click", function () {
      const table = th.closest("table"), body = table.tBodies[0];
      const index = Array.prototype.indexOf.call(th.parentNode.children, th);
      const numeric = th.dataset.sort === "number", descending = th.dataset.dir !== "desc";
      const value = function (row) {
        const cell = row.children[index], raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent;
        return numeric ? (raw === "" ? -Infinity : parseFloat(raw)) : raw.trim().toLowerCase();
      };
      Array.from(body.rows).sort(function (a, b) {
        const x = value(a), y = value(b);
        return (x < y ? -1 : x > y ? 1 : 0) * (descending ? -1 : 1);
      }).forEach(function (row) { body.appendChild(row); });
      table.querySelectorAll("th").forEach(function (h) { delete h.dataset.dir; });
      th.dataset.dir = descending ? "desc" : "asc";
    });
  });
})();

// Filters apply on change (a search box on Enter); a new range drops a custom window, a new project drops its
// service and route (and their searches).
(function () {
  const form = document.getElementById("filters");
  if (!form) return;
  form.addEventListener("change", function (event) {
    const drop = {range: ["start", "end"], project: ["service", "route", "tenant", "service_q", "route_q"],
                  service: ["route", "route_q"]}[event.target.name] || [];
    drop.forEach(function (name) { form.querySelectorAll("[name=" + name + "]").forEach(function (el) { el.disabled = true; }); });
    if (event.target.tagName === "SELECT") form.submit();
  });
})();

// A picker form (form.picker, e.g. the Engine page's instance) applies on change, like the filters.
(function () {
  document.querySelectorAll("form.picker").forEach(function (form) {
    form.addEventListener("change", function (event) {
      if (event.target.tagName === "SELECT") form.submit();
    });
  });
})();

// A nav menu closes when another opens or a click lands elsewhere.
(function () {
  const menus = document.querySelectorAll("header.top details.menu");
  document.addEventListener("click", function (event) {
    menus.forEach(function (menu) { if (!menu.contains(event.target)) menu.open = false; });
  });
})();
