// envbench explore: the page. Plain JavaScript, no library, no network.
// Data comes from <script> files that assign window.ENVBENCH_DATA[key] (file:// blocks fetch()).
(function () {
  "use strict";
  const DATA = window.ENVBENCH_DATA || {};
  const INDEX = DATA.index;
  const app = document.getElementById("app");
  const docCache = {};
  const listState = { q: "", type: "", fine: "", reason: "", failures: false, sort: "n", desc: false };
  // the columns the document list sorts by (click a header; again for the other direction)
  const SORTS = { n: "#", title: "title", entities: "entities", renamed: "renamed", kept: "kept",
                  f1_original: "F1 original", f1_twins: "mean F1 twins", f1_drop: "F1 drop" };

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  function fmt(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(1); }
  function colour(i) { return "hsl(" + ((i * 137.508) % 360).toFixed(1) + ", 70%, 84%)"; }
  function pad(n) { return String(n).padStart(4, "0"); }
  // milliseconds from navigation to the last render, for bench/explore.py (read from the DOM)
  function rendered() { document.documentElement.dataset.renderMs = performance.now().toFixed(0); }

  function loadDoc(n) {
    const key = "doc:" + n;
    if (DATA[key]) return Promise.resolve(DATA[key]);
    if (docCache[n]) return docCache[n];
    docCache[n] = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = "data/docs/" + pad(n) + ".js";
      s.onload = () => (DATA[key] ? resolve(DATA[key]) : reject(new Error("no data in " + s.src)));
      s.onerror = () => reject(new Error("cannot load " + s.src));
      document.head.appendChild(s);
    });
    return docCache[n];
  }

  // ------------------------------------------------------------------ document list
  function matches(d) {
    if (listState.q && d.title.toLowerCase().indexOf(listState.q.toLowerCase()) < 0) return false;
    if (listState.type && d.types.indexOf(listState.type) < 0) return false;
    if (listState.fine && d.fine_types.indexOf(listState.fine) < 0) return false;
    if (listState.reason && d.reasons.indexOf(listState.reason) < 0) return false;
    if (listState.failures && !d.consistency_failures) return false;
    return true;
  }

  // names: value -> label shown as "label (value)" (fine types with --index)
  function options(values, current, label, names) {
    const shown = (v) => (names && names[v] ? names[v] + " (" + v + ")" : v);
    return '<option value="">' + esc(label) + "</option>" + values.map((v) =>
      '<option value="' + esc(v) + '"' + (v === current ? " selected" : "") + ">" + esc(shown(v)) + "</option>").join("");
  }

  function renderList() {
    const s = INDEX.summary;
    const types = Object.keys(s.substitution_rate).filter((t) => t !== "total" && s.substitution_rate[t].entities > 0);
    const reasons = Object.keys(s.kept_reasons);
    app.innerHTML =
      '<div class="filters">' +
      '<input type="search" id="q" placeholder="Search titles" value="' + esc(listState.q) + '">' +
      '<select id="type">' + options(types, listState.type, "any coarse type") + "</select>" +
      '<select id="fine">' + options(s.fine_types, listState.fine, "any fine type", s.fine_type_labels) + "</select>" +
      '<select id="reason">' + options(reasons, listState.reason, "any kept reason") + "</select>" +
      '<label><input type="checkbox" id="failures"' + (listState.failures ? " checked" : "") +
      (s.has_predictions ? "" : " disabled") + "> has consistency failures</label>" +
      '<span id="count" class="muted"></span></div>' +
      '<table id="docs"><thead><tr>' + Object.entries(SORTS).map(([key, label]) =>
        '<th class="sortable' + (key === "title" ? "" : " num") + (listState.sort === key ? " sorted" : "") +
        '" data-sort="' + key + '" title="sort by ' + esc(label) + '">' + esc(label) +
        (listState.sort === key ? (listState.desc ? " ▼" : " ▲") : "") + "</th>").join("") +
      '<th>kept because</th></tr></thead><tbody></tbody></table>';
    const value = (d, key) => (d[key] === null || d[key] === undefined ? -Infinity : d[key]);
    const draw = () => {
      const key = listState.sort;
      const rows = INDEX.documents.filter(matches).slice().sort((x, y) => {
        const a = value(x, key), b = value(y, key);
        const c = a < b ? -1 : a > b ? 1 : x.n - y.n;
        return listState.desc ? -c : c;
      });
      document.getElementById("count").textContent = rows.length + " of " + INDEX.documents.length + " documents";
      document.querySelector("#docs tbody").innerHTML = rows.map((d) =>
        '<tr class="doc-row" data-n="' + d.n + '"><td class="num">' + d.n + "</td><td>" + esc(d.title) +
        '</td><td class="num">' + d.entities + '</td><td class="num">' + d.renamed + '</td><td class="num">' + d.kept +
        '</td><td class="num">' + fmt(d.f1_original) + '</td><td class="num">' + fmt(d.f1_twins) +
        '</td><td class="num">' + fmt(d.f1_drop) + '</td><td class="reasons">' +
        d.reasons.map((r) => '<span class="tag">' + esc(r) + "</span>").join(" ") + "</td></tr>").join("");
      rendered();
    };
    document.querySelector("#docs thead").addEventListener("click", (e) => {
      const th = e.target.closest("th[data-sort]");
      if (!th) return;
      const key = th.dataset.sort;
      // a second click turns the order round; F1 drop starts with the largest
      const desc = listState.sort === key ? !listState.desc : key === "f1_drop";
      location.hash = "#/sort/" + key + "/" + (desc ? "desc" : "asc");
    });
    for (const id of ["q", "type", "fine", "reason"]) {
      document.getElementById(id).addEventListener("input", (e) => { listState[id] = e.target.value; draw(); });
    }
    document.getElementById("failures").addEventListener("change", (e) => { listState.failures = e.target.checked; draw(); });
    document.querySelector("#docs tbody").addEventListener("click", (e) => {
      const tr = e.target.closest("tr");
      if (tr) location.hash = "#/doc/" + tr.dataset.n + "/" + INDEX.summary.seeds[0];
    });
    draw();
  }

  // ------------------------------------------------------------------ one document
  // Each token gets the mentions that cover it; runs of tokens with the same cover become one span,
  // coloured by the innermost (shortest) mention, so nested mentions stay visible.
  function sentenceHtml(doc, sid) {
    const toks = doc.sents[sid];
    const cover = toks.map(() => []);
    const ends = toks.map(() => []);
    doc.entities.forEach((ent, ei) => {
      for (const [s, a, b] of ent.mentions) {
        if (s !== sid) continue;
        for (let i = a; i < b && i < toks.length; i++) cover[i].push([b - a, ei]);
        if (b - 1 < toks.length) ends[b - 1].push(ei);
      }
    });
    let html = "";
    let i = 0;
    while (i < toks.length) {
      const key = cover[i].map((c) => c[1]).sort().join(",");
      // a run ends where the cover changes or a mention ends (its index label goes right after it)
      let last = i;
      const words = [esc(toks[i])];
      while (!ends[last].length && last + 1 < toks.length &&
             cover[last + 1].map((c) => c[1]).sort().join(",") === key) {
        last++;
        words.push(esc(toks[last]));
      }
      const text = words.join(" ");
      if (!cover[i].length) {
        html += text + " ";
      } else {
        const inner = cover[i].slice().sort((x, y) => x[0] - y[0] || x[1] - y[1])[0][1];
        const ent = doc.entities[inner];
        const labels = ends[last].map((e) => '<sub class="idx">' + e + "</sub>").join("");
        html += '<span class="m" data-e="' + inner + '" style="background:' + colour(inner) + '" title="entity ' +
          inner + " · " + esc(ent.type) + '">' + text + "</span>" + labels + " ";
      }
      i = last + 1;
    }
    return html;
  }

  function docHtml(doc) {
    return doc.sents.map((_, sid) => sentenceHtml(doc, sid));
  }

  function entityName(view, ei) { return view.entities[ei] ? view.entities[ei].name : "#" + ei; }

  function factList(cls, label, facts, orig, twin, rel) {
    if (!facts || !facts.length) return "<p class='muted'>" + esc(label) + ": none</p>";
    return "<h4 class='" + cls + "'>" + esc(label) + " (" + facts.length + ")</h4><ul class='facts " + cls + "'>" +
      facts.map(([h, t, r]) => "<li><b>" + esc(rel[r] || r) + "</b>: " + esc(entityName(orig, h)) + " → " +
        esc(entityName(orig, t)) + " <span class='muted'>| renamed: " + esc(entityName(twin, h)) + " → " +
        esc(entityName(twin, t)) + "</span></li>").join("") + "</ul>";
  }

  function substitutionHtml(entry, ei, orig) {
    const sub = (entry.substitutions || []).find((s) => s.entity === ei);
    const ent = orig.entities[ei];
    let html = "<h3>Entity " + ei + " · " + esc(ent.type) + "</h3>";
    if (!sub) return html + "<p class='muted'>No substitution row (no --substitutions given).</p>";
    const pairs = sub.old_names.map((o, i) => "<li>" + esc(o) + " → " + esc(sub.new_names[i]) + "</li>").join("");
    html += "<ul>" + pairs + "</ul>";
    html += "<p>" + (sub.kind === "kept" ? "<span class='tag'>kept</span> " + esc(sub.reason || "") :
      "<span class='tag'>" + esc(sub.kind) + "</span>") + "</p>";
    const names = sub.labels || {};
    const named = (q) => (q ? (names[q] ? names[q] + " (" + q + ")" : q) : "–");
    if (sub.qid || sub.new_qid) html += "<p>" + esc(named(sub.qid)) + " → " + esc(named(sub.new_qid)) + "</p>";
    if (sub.fine_type) html += "<p>fine type " + esc(named(sub.fine_type)) + "</p>";
    // why the substitution is what it is: the classes it was drawn by, catch-alls set aside, head noun, adjectives
    const classes = sub.class_labels || {};
    const list = (qs) => qs.map((q) => esc(classes[q] ? classes[q] + " (" + q + ")" : q)).join(", ");
    if ((sub.drawn_by || []).length) html += "<p>drawn by " + list(sub.drawn_by) + "</p>";
    if ((sub.catch_all || []).length) html += "<p>catch-all classes (never decide a draw) " + list(sub.catch_all) + "</p>";
    if (sub.head_noun) html += "<p>head noun kept: " + esc(sub.head_noun) + "</p>";
    if (sub.gender_from) html += "<p>gender: " + esc(sub.gender || "unknown") + " (from " + esc(sub.gender_from) + ")" +
      (sub.new_qid ? "; new item: " + esc(sub.new_gender || "unknown") : "") + "</p>";
    if ((sub.adjectival || []).length) html += "<p>adjectival forms given: " + sub.adjectival.map(esc).join(", ") + "</p>";
    if ((sub.written || []).length) html += "<p>written from another new name (short names, spellings, surnames): " +
      sub.written.map(esc).join(", ") + "</p>";
    return html;
  }

  // every entity of the twin that kept its names, with the reason in words: readable without hovering
  function keptHtml(entry, orig) {
    const kept = (entry.substitutions || []).filter((s) => s.kind === "kept");
    if (!kept.length) return "<div class='panel' id='kept'><h3>Kept names</h3><p class='muted'>none: every entity " +
      "with a substitution row was renamed</p></div>";
    const words = INDEX.summary.kept_reason_text || {};
    return "<div class='panel' id='kept'><h3>Kept names (" + kept.length + ")</h3><ul>" + kept.map((s) =>
      "<li><span class='m' data-e='" + s.entity + "' style='background:" + colour(s.entity) + "'>" +
      esc(entityName(orig, s.entity)) + "</span> <span class='tag'>" + esc(s.reason || "") + "</span> " +
      esc(words[s.reason] || "") + "</li>").join("") + "</ul></div>";
  }

  function renderDoc(n, seed) {
    const count = INDEX.documents.length;
    if (!Number.isInteger(n) || n < 0 || n >= count) {
      app.innerHTML = "<p>There is no document " + esc(String(n)) + ": the documents are numbered 0 to " + (count - 1) +
        ", as in the source file. <a href='#/'>The document list</a>.</p>";
      return;
    }
    app.innerHTML = "<p class='muted'>Loading document " + n + "…</p>";
    loadDoc(n).then((rec) => {
      const seeds = Object.keys(rec.twins).map(Number).sort((a, b) => a - b);
      if (!seeds.length) { app.innerHTML = "<p>This document has no renamed twin.</p>"; return; }
      const k = seeds.indexOf(seed) >= 0 ? seed : seeds[0];
      const entry = rec.twins[String(k)];
      const orig = rec.original;
      const twin = entry.doc;
      const a = docHtml(orig);
      const b = docHtml(twin);
      let rows = "";
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        rows += "<div class='sent'><span class='sid'>" + i + "</span>" + (a[i] || "") + "</div>" +
          "<div class='sent'><span class='sid'>" + i + "</span>" + (b[i] || "") + "</div>";
      }
      const rel = INDEX.summary.relations;
      let facts = "<p class='muted'>No predictions given (--original-pred and --env-pred).</p>";
      if (entry.facts) {
        facts = factList("lost", "Lost on the twin", entry.facts.lost, orig, twin, rel) +
          factList("gained", "Correct on the twin only", entry.facts.gained, orig, twin, rel) +
          factList("both", "Correct on both", entry.facts.both, orig, twin, rel) +
          factList("fp", "False positives on the twin", entry.facts.false_positives, twin, twin, rel) +
          factList("fp", "False positives on the original", rec.original_fp, orig, orig, rel);
      }
      app.innerHTML =
        "<h2>" + esc(orig.title) + "</h2>" +
        "<div class='seeds'>Twin: " + seeds.map((s) => "<button data-seed='" + s + "'" + (s === k ? " class='on'" : "") +
          ">" + esc(twin.title.replace(/-\d+$/, "")) + "-" + s + "</button>").join("") +
        " <span class='muted'>F1 original " + fmt(rec.f1_original) + " · twin " + fmt(entry.f1) + "</span></div>" +
        "<div class='layout'><div><div class='pair' id='pair'><h3>Original</h3><h3>" + esc(twin.title) + "</h3>" + rows +
        "</div></div><div>" + keptHtml(entry, orig) +
        "<div class='panel' id='entity'><p class='muted'>Hover or click a mention for its substitution.</p></div>" +
        "<div class='panel' id='facts'><h3>Facts</h3>" + facts + "</div></div></div>";
      rendered();
      app.querySelector(".seeds").addEventListener("click", (e) => {
        const s = e.target.dataset && e.target.dataset.seed;
        if (s) location.hash = "#/doc/" + n + "/" + s;
      });
      const pair = document.getElementById("pair");
      const mark = (ei, cls, on) => pair.querySelectorAll(".m[data-e='" + ei + "']").forEach((el) => el.classList.toggle(cls, on));
      let pinned = null;
      pair.addEventListener("mouseover", (e) => {
        const m = e.target.closest(".m");
        if (!m) return;
        mark(m.dataset.e, "hl", true);
        if (pinned === null) document.getElementById("entity").innerHTML = substitutionHtml(entry, Number(m.dataset.e), orig);
      });
      pair.addEventListener("mouseout", (e) => {
        const m = e.target.closest(".m");
        if (m) mark(m.dataset.e, "hl", false);
      });
      pair.addEventListener("click", (e) => {
        const m = e.target.closest(".m");
        if (!m) return;
        if (pinned !== null) mark(pinned, "pinned", false);
        pinned = m.dataset.e;
        mark(pinned, "pinned", true);
        document.getElementById("entity").innerHTML = substitutionHtml(entry, Number(pinned), orig);
      });
    }).catch((err) => { app.innerHTML = "<p>" + esc(err.message) + "</p>"; });
  }

  // ------------------------------------------------------------------ summary
  function renderSummary() {
    const s = INDEX.summary;
    const keptWords = s.kept_reason_text || {};
    const rate = Object.entries(s.substitution_rate).map(([t, c]) =>
      "<tr><td>" + esc(t) + "</td><td class='num'>" + c.renamed + "</td><td class='num'>" + c.entities +
      "</td><td class='num'>" + (c.rate === null ? "–" : c.rate.toFixed(3)) + "</td></tr>").join("");
    const kept = Object.entries(s.kept_reasons).map(([r, n]) => "<tr><td>" + esc(r) + "</td><td class='num'>" + n +
      "</td><td>" + esc(keptWords[r] || "") + "</td></tr>").join("");
    const gender = Object.entries(s.gender || {}).map(([k, n]) => "<tr><td>" + esc(k) + "</td><td class='num'>" + n + "</td></tr>").join("");
    const cons = Object.entries(s.consistency).sort((x, y) => x[1].rate - y[1].rate).map(([r, c]) =>
      "<tr><td>" + esc(r) + "</td><td>" + esc(c.name) + "</td><td class='num'>" + c.correct_on_original +
      "</td><td class='num'>" + c.still_correct + "</td><td class='num'>" + c.rate.toFixed(3) + "</td></tr>").join("");
    const f1 = s.f1 ? Object.entries(s.f1.rows).map(([k, r]) => "<tr><td>" + esc(k) + "</td><td class='num'>" +
      fmt(r.precision) + "</td><td class='num'>" + fmt(r.recall) + "</td><td class='num'>" + fmt(r.f1) +
      "</td><td class='num'>" + r.correct + "</td><td class='num'>" + r.predicted + "</td><td class='num'>" + r.gold +
      "</td></tr>").join("") : "";
    app.innerHTML = "<h2>Summary</h2><h3>F1, original against Env</h3>" + (s.f1 ?
      "<table id='f1'><tr><th></th><th class='num'>precision</th><th class='num'>recall</th><th class='num'>F1</th>" +
      "<th class='num'>correct</th><th class='num'>predicted</th><th class='num'>gold</th></tr>" + f1 + "</table>" +
      "<p>Env mean F1 " + fmt(s.f1.env_mean_f1) + ", a drop of " + fmt(s.f1.drop) + " points from the original " +
      "<span class='muted'>(micro-averaged over the documents shown; `envbench evaluate` gives the official " +
      "scorer's figures)</span></p>" : "<p class='muted'>Needs --original-pred and --env-pred.</p>") +
      "<h3>Substitution rate by type</h3><table><tr><th>type</th><th class='num'>renamed</th>" +
      "<th class='num'>entities</th><th class='num'>rate</th></tr>" + rate + "</table>" +
      "<h3>Kept entities by reason</h3>" + (kept ? "<table><tr><th>reason</th><th class='num'>entities</th><th>why</th></tr>" + kept + "</table>" : "<p class='muted'>none</p>") +
      (gender ? "<h3>Persons by gender source</h3><table><tr><th>PER entities</th><th class='num'>count</th></tr>" + gender + "</table>" : "") +
      "<h3>Consistency per relation</h3>" + (s.has_predictions ? "<table><tr><th>id</th><th>relation</th>" +
        "<th class='num'>correct on original</th><th class='num'>still correct on twins</th><th class='num'>rate</th></tr>" + cons + "</table>" :
        "<p class='muted'>Needs --original-pred and --env-pred.</p>") +
      (s.plots.length ? "<h3>Report plots</h3><div class='plots'>" + s.plots.map((p) => "<img alt='" + esc(p) + "' src='plots/" + esc(p) + "'>").join("") + "</div>" : "");
    rendered();
  }

  function route() {
    if (!INDEX) { app.innerHTML = "<p>data/index.js is missing: rebuild the site with envbench explore.</p>"; return; }
    document.getElementById("source").textContent = INDEX.summary.sources.env_gold + " vs " + INDEX.summary.sources.original_gold;
    const h = location.hash.replace(/^#\/?/, "").split("/");
    if (h[0] === "doc" && h[1] !== undefined && h[1] !== "") renderDoc(Number(h[1]), Number(h[2] || 0));
    else if (h[0] === "summary") renderSummary();
    else if (h[0] === "sort" && SORTS[h[1]]) {  // #/sort/f1_drop/desc: a list order one can link to
      listState.sort = h[1];
      listState.desc = h[2] ? h[2] === "desc" : h[1] === "f1_drop";
      renderList();
    } else renderList();
  }
  window.addEventListener("hashchange", route);
  route();
})();
