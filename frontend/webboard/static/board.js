// The lockgate web board. Everything shown comes from /board.json or the
// /board/stream events and was written by other workers: it is put into
// the page with textContent only, never parsed as markup.
"use strict";

(function () {
  const pollEvery = 2000;
  const retryEvery = 30000;
  let data = null;      // the last snapshot
  let receivedAt = 0;   // when it arrived (performance.now()), for the countdown
  let sort = { col: "left", dir: 1 };
  // session is the signed-in user and the server's CSRF token, from
  // /board/session; null when the page is read without credentials, and
  // then it shows no clear buttons.
  let session = null;
  const filterBox = document.getElementById("filter");
  // failed is the last read that failed while no snapshot is shown: it
  // stays on the page until a snapshot arrives, so that an empty table
  // never reads as "live".
  let failed = null;

  // at is the address of a request of the page, built on location.origin:
  // a page opened at http://NAME:TOKEN@host/ resolves relative addresses
  // with the credentials in them, which fetch refuses; the browser sends
  // the credentials it learned on loading the page by itself.
  function at(path) {
    return new URL(path, location.origin).href;
  }

  // el makes an element holding text (as text).
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // left is the seconds left of a record as of now, counted down from the
  // snapshot's own count so that the browser's clock does not matter.
  function left(seconds) {
    return Math.max(0, seconds - Math.floor((performance.now() - receivedAt) / 1000));
  }

  function fmtLeft(s) {
    if (s <= 0) return "expired";
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const two = (n) => String(n).padStart(2, "0");
    if (h > 0) return h + "h" + two(m) + "m";
    if (m > 0) return m + "m" + two(sec) + "s";
    return sec + "s";
  }

  // The filter: "worker:NAME" is that holder's records only, "key:TEXT"
  // the keys holding TEXT, any other text a holder or key holding it.
  function parseFilter(text) {
    text = text.trim();
    if (text.startsWith("worker:")) return { worker: text.slice(7).trim() };
    if (text.startsWith("key:")) return { key: text.slice(4).trim().toLowerCase() };
    return { any: text.toLowerCase() };
  }

  function matches(f, holder, key) {
    if (f.worker !== undefined) return f.worker === "" || holder === f.worker;
    if (f.key !== undefined) return (key || "").toLowerCase().includes(f.key);
    return f.any === "" || (holder || "").toLowerCase().includes(f.any) || (key || "").toLowerCase().includes(f.any);
  }

  // The filter's first value comes from the address (#worker=bob,
  // ?key=src/, #filter=text), so that a view can be linked to.
  function filterFromURL() {
    for (const part of [location.hash.slice(1), location.search.slice(1)]) {
      const p = new URLSearchParams(part);
      if (p.has("worker")) return "worker:" + p.get("worker");
      if (p.has("key")) return "key:" + p.get("key");
      if (p.has("filter")) return p.get("filter");
    }
    return "";
  }

  function sortValue(l, col) {
    switch (col) {
      case "holder": return l.holder;
      case "type": return l.holder_type;
      case "key": return l.key;
      case "reason": return l.reason;
      case "mark": return (l.corrupt ? "2" : l.stale ? "1" : "0");
      default: return l.corrupt ? Number.MAX_SAFE_INTEGER : l.seconds_left;
    }
  }

  function compare(a, b) {
    const x = sortValue(a, sort.col), y = sortValue(b, sort.col);
    let c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
    if (c === 0) c = String(a.key).localeCompare(String(b.key));
    return c * sort.dir;
  }

  function renderLocks(f) {
    const body = document.querySelector("#locks tbody");
    const rows = data.locks.filter((l) => l.corrupt ? f.worker === undefined && matches(f, "", l.key) : matches(f, l.holder, l.key));
    rows.sort(compare);
    const trs = rows.map((l) => {
      const tr = el("tr", null, l.corrupt ? "corrupt" : l.stale ? "stale" : "");
      if (l.corrupt) {
        tr.append(el("td", "?"), el("td", "?"), el("td", l.key, "key"), el("td", l.error, "reason"), el("td", "?"), el("td", "CORRUPT", "mark"));
      } else {
        tr.append(el("td", l.holder, "holder"), el("td", l.holder_type), el("td", l.key, "key"), el("td", l.reason, "reason"),
          el("td", fmtLeft(left(l.seconds_left)), "left"), el("td", l.stale ? "STALE" : "", "mark"));
      }
      if (session) tr.append(clearCell(l));
      return tr;
    });
    body.replaceChildren(...trs);
    document.getElementById("no-locks").hidden = trs.length > 0;
    document.getElementById("clear-col").hidden = !session;
    for (const th of document.querySelectorAll("#locks th[data-sort]")) {
      th.setAttribute("aria-sort", th.dataset.sort === sort.col ? (sort.dir > 0 ? "ascending" : "descending") : "none");
    }
  }

  // clearCell is a lock row's clear button: it asks first, naming the
  // key and its holder, then clears the lock as the signed-in user.
  function clearCell(l) {
    const td = el("td", null, "clear");
    const button = el("button", "clear");
    button.type = "button";
    button.addEventListener("click", () => {
      const holder = l.corrupt ? "an unreadable record" : l.holder;
      if (!window.confirm("Clear the lock on " + l.key + " held by " + holder + "?")) return;
      clear(l.key);
    });
    td.append(button);
    return td;
  }

  // clear asks the server to clear key, then reads the board again.
  function clear(key) {
    fetch(at("/board/clear"), {
      method: "POST",
      cache: "no-store",
      headers: { "Content-Type": "application/json", "X-Lockgate-CSRF": session.csrf },
      body: JSON.stringify({ key: key }),
    })
      .then((r) => r.json().then((body) => {
        if (!r.ok) throw new Error(body.error ? body.error.message : r.statusText);
        status("cleared " + key);
        poll();
      }))
      .catch((err) => status("cannot clear " + key + ": " + err.message));
  }

  // signIn learns whether the page was opened with credentials: only then
  // may it clear locks. The table's data-session says which it learned
  // ("signed-in" or "read-only"), for styles and tests.
  function signIn() {
    const learned = (body) => {
      session = body;
      document.getElementById("locks").dataset.session = body ? "signed-in" : "read-only";
      render();
    };
    fetch(at("/board/session"), { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .then(learned, () => learned(null));
  }

  function renderPauses(f) {
    const pauses = data.pauses.filter((p) => matches(f, p.holder, p.key));
    document.getElementById("pauses-section").hidden = pauses.length === 0;
    document.getElementById("pauses").replaceChildren(...pauses.map((p) => {
      const li = el("li", null, "pause");
      li.append(el("strong", "PAUSED " + p.feature), document.createTextNode(" by " + p.holder + " (" + p.holder_type + "), " +
        fmtLeft(left(p.seconds_left)) + " left" + (p.reason ? ": " + p.reason : "")));
      return li;
    }));
  }

  function renderQueue() {
    const q = data.queue;
    document.getElementById("queue-section").hidden = !q;
    if (!q) return;
    document.getElementById("queue-file").textContent = "(" + q.file + ")";
    const problem = document.getElementById("queue-problem");
    problem.hidden = !q.problem;
    problem.textContent = q.problem || "";
    document.getElementById("queue-counts").textContent = ["ready", "claimed", "done", "failed"]
      .map((s) => (q.counts[s] || 0) + " " + s).join(", ");
    const stateOf = new Map(q.packages.map((p) => [p.id, p.state]));
    document.querySelector("#queue tbody").replaceChildren(...q.packages.map((p) => {
      const tr = el("tr", null, "package " + p.state);
      tr.append(el("td", p.title ? p.id + " — " + p.title : p.id), el("td", p.state), el("td", p.priority),
        el("td", p.holder), el("td", waitsFor(p, stateOf), "waits"));
      return tr;
    }));
  }

  // waitsFor says why a package waits, as the terminal board says it:
  // its dependencies not done (with their states) and the locks in its
  // way (with their holders).
  function waitsFor(p, stateOf) {
    const why = [];
    if (p.waits_for.length > 0) {
      why.push("after " + p.waits_for.map((d) => d + " (" + (stateOf.get(d) || "unknown") + ")").join(", "));
    }
    if ((p.held_by || []).length > 0) {
      why.push(p.held_by.map((l) => l.key + " held by " + l.holder).join(", "));
    }
    return why.join("; ");
  }

  function renderEvents() {
    document.getElementById("events").replaceChildren(...data.events.map((e) =>
      el("li", e.timestamp.replace("T", " ").replace(/\.\d+/, "") + "  " + e.worker + "  " + e.action + "  " + e.key)));
  }

  function render() {
    if (!data) return;
    const f = parseFilter(filterBox.value);
    document.getElementById("summary").textContent = (data.locks.length + data.pauses.length) +
      " live lock(s) in " + data.store + " as of " + data.now.replace("T", " ").replace(/\.\d+/, "");
    renderPauses(f);
    renderLocks(f);
    renderQueue();
    renderEvents();
  }

  function show(snapshot) {
    data = snapshot;
    failed = null;
    receivedAt = performance.now();
    render();
  }

  function status(text) {
    document.getElementById("status").textContent = text;
  }

  let polling = null;
  function poll() {
    fetch(at("/board.json"), { cache: "no-store" })
      .then((r) => r.json().then((body) => {
        if (!r.ok) throw new Error(body.error || r.statusText);
        show(body);
        if (polling) status("updating every " + pollEvery / 1000 + " s");
      }))
      .catch((err) => {
        if (!data) failed = "cannot read the board: " + err.message;
        status("cannot read the board: " + err.message);
      });
  }

  // The stream, or polling while the browser cannot keep it open: the
  // stream is tried again every retryEvery, and polling stops once it
  // is back.
  function connect() {
    if (typeof EventSource === "undefined") { startPolling(); return; }
    const es = new EventSource(at("/board/stream"));
    // Open is not read: while no snapshot came, a failed read stays shown.
    es.addEventListener("open", () => { stopPolling(); status(failed || (data ? "live" : "connected, waiting for the board…")); });
    es.addEventListener("board", (ev) => { show(JSON.parse(ev.data)); status("live"); });
    es.addEventListener("problem", (ev) => status(JSON.parse(ev.data).error));
    es.addEventListener("error", () => { es.close(); startPolling(); setTimeout(connect, retryEvery); });
  }

  function startPolling() {
    if (polling) return;
    polling = setInterval(poll, pollEvery);
    poll();
  }

  function stopPolling() {
    clearInterval(polling);
    polling = null;
  }

  for (const th of document.querySelectorAll("#locks th[data-sort]")) {
    th.addEventListener("click", () => {
      sort = sort.col === th.dataset.sort ? { col: sort.col, dir: -sort.dir } : { col: th.dataset.sort, dir: 1 };
      render();
    });
  }
  filterBox.value = filterFromURL();
  filterBox.addEventListener("input", () => {
    history.replaceState(null, "", filterBox.value ? "#filter=" + encodeURIComponent(filterBox.value) : location.pathname);
    render();
  });
  window.addEventListener("hashchange", () => { filterBox.value = filterFromURL(); render(); });
  setInterval(render, 1000);
  signIn();
  poll();
  connect();
})();
