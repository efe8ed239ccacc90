// sessiondb web viewer: actions (JSON POSTs to this server), folds loaded when opened
// (tool calls, records, sub-agents), copy buttons, links to a message opening its folds,
// keyboard navigation, the thread's show/hide switches, times in local time, and live
// pages (server-sent events: the list and a session follow the store as it is written).
// No inline script anywhere: the Content-Security-Policy allows only this file.
"use strict";

function status(text, isError) {
  const el = document.getElementById("action-status");
  if (el) {
    el.textContent = text;
    el.classList.toggle("error", !!isError);
  }
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body || {}),
  });
  let answer = {};
  try { answer = await response.json(); } catch (e) { answer = {}; }
  if (!response.ok) {
    throw new Error(answer.error || ("HTTP " + response.status));
  }
  return answer;
}

// Where to go after logging in: `next` only when it is a plain path (printable ASCII, one
// leading "/", no backslash) that the browser's own URL parser (which drops tabs and
// newlines and reads a backslash as "/") puts on this origin; else the sessions page.
// The server checks the same.
// (tests/it/web_login.rs runs this function under node.)
function sameOriginNext(next, origin) {
  if (typeof next !== "string" || !/^\/(?![\/\\])[\x21-\x7e]*$/.test(next) || next.includes("\\")) return "/";
  try {
    const url = new URL(next, origin);
    return url.origin === origin ? url.pathname + url.search + url.hash : "/";
  } catch (e) {
    return "/";
  }
}

function sessionBase() {
  const m = location.pathname.match(/^\/session\/[^/]+\/[^/]+/);
  return m ? m[0] : null;
}

async function fork(upTo) {
  const base = sessionBase();
  if (!base) return;
  status("Forking…");
  try {
    const answer = await post(base + "/fork", upTo ? { up_to: upTo } : {});
    status("Forked: " + answer.session_id);
    location.assign(answer.href);
  } catch (e) {
    status("Fork failed: " + e.message, true);
  }
}

function openAncestors(el) {
  for (let d = el; d; d = d.parentElement) {
    if (d.tagName === "DETAILS" && !d.open) d.open = true;
  }
}

function showHash() {
  if (!location.hash.startsWith("#m-")) return;
  let id;
  try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
  const el = document.getElementById(id);
  if (!el) return;
  openAncestors(el);
  el.scrollIntoView({ block: "start" });
  el.classList.add("target");
  if (el.tabIndex < 0 || el.hasAttribute("tabindex")) el.focus({ preventScroll: true });
}

// A fold with data-src is written empty (the page stays small) and filled from this server
// when it is first opened; data-state says "loading", then "loaded".
async function loadFold(details) {
  if (details.dataset.state) return;
  const body = details.querySelector(":scope > .lazy");
  if (!body) return;
  details.dataset.state = "loading";
  body.setAttribute("aria-busy", "true");
  try {
    const response = await fetch(details.dataset.src, { credentials: "same-origin" });
    if (!response.ok) throw new Error("HTTP " + response.status);
    // The fragment is this server's own escaped rendering, parsed inert then moved in.
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    // (Copied out first: adopting a node takes it out of the live list.)
    const nodes = Array.from(doc.body.childNodes);
    body.replaceChildren(...nodes.map((node) => document.adoptNode(node)));
    details.dataset.state = "loaded";
  } catch (e) {
    const note = document.createElement("p");
    note.className = "error";
    note.textContent = "Could not load this part: " + e.message;
    body.prepend(note);
    delete details.dataset.state;
  } finally {
    body.removeAttribute("aria-busy");
  }
}

// Times: the server writes UTC; the reader sees local time (exact on hover) and ages that
// keep counting.
function age(ms) {
  const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  if (s < 2592000) return Math.floor(s / 86400) + " d ago";
  if (s < 31536000) return Math.floor(s / 2592000) + " mo ago";
  return Math.floor(s / 31536000) + " y ago";
}

function localize(root) {
  for (const t of root.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (isNaN(d.getTime())) continue;
    t.title = d.toLocaleString(undefined, { dateStyle: "full", timeStyle: "long" });
    if (t.dataset.age) {
      t.textContent = age(d.getTime());
    } else {
      const today = new Date().toDateString() === d.toDateString();
      t.textContent = today ? d.toLocaleTimeString() : d.toLocaleString();
    }
  }
}

// The thread's switches: each hides one kind of part (a class on the thread); remembered.
function setUpToggles() {
  for (const box of document.querySelectorAll(".toggles")) {
    const thread = box.closest(".thread");
    if (!thread) continue;
    box.hidden = false;
    for (const input of box.querySelectorAll("input[data-toggle]")) {
      const name = input.dataset.toggle;
      let stored = null;
      try { stored = localStorage.getItem("sessiondb.show." + name); } catch (e) { stored = null; }
      if (stored === "0") input.checked = false;
      const apply = () => {
        thread.classList.toggle("hide-" + name, !input.checked);
        try { localStorage.setItem("sessiondb.show." + name, input.checked ? "1" : "0"); } catch (e) { /* private mode */ }
      };
      input.addEventListener("change", apply);
      apply();
    }
  }
}

// Live pages. Each top-level part of a conversation is remembered as the server wrote it;
// on a change only the parts that differ (the growing last turn, new ones) are replaced,
// so the folds a reader opened elsewhere stay open.
const written = new WeakMap();

function remember(container) {
  for (const el of container.children) written.set(el, el.outerHTML);
}

async function fetchDocument(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error("HTTP " + response.status);
  return new DOMParser().parseFromString(await response.text(), "text/html");
}

function atBottom() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
}

async function refreshConversation() {
  const current = document.querySelector(".thread[data-live] > .conversation");
  if (!current) return;
  const doc = await fetchDocument(location.pathname + "?fragment=1");
  const fresh = doc.querySelector(".conversation");
  if (!fresh) return;
  const follow = atBottom();
  const old = Array.from(current.children);
  const next = Array.from(fresh.children);
  next.forEach((el, i) => {
    const html = el.outerHTML;
    if (i < old.length && written.get(old[i]) === html) return;
    const node = document.adoptNode(el);
    written.set(node, html);
    localize(node);
    node.classList.add("fresh");
    if (i < old.length) current.replaceChild(node, old[i]); else current.appendChild(node);
  });
  for (let i = next.length; i < old.length; i++) old[i].remove();
  if (follow) window.scrollTo(0, document.documentElement.scrollHeight);
}

async function refreshListing() {
  const listing = document.getElementById("listing");
  if (!listing) return;
  const doc = await fetchDocument(location.href);
  const fresh = doc.getElementById("listing");
  if (!fresh) return;
  listing.replaceChildren(...Array.from(fresh.childNodes).map((n) => document.adoptNode(n)));
  localize(listing);
}

function follow() {
  const el = document.querySelector("[data-live]");
  if (!el || !window.EventSource) return;
  const refresh = el.id === "listing" ? refreshListing : refreshConversation;
  const conversation = el.querySelector(":scope > .conversation");
  if (conversation) remember(conversation);
  // One refresh at a time; a change during one causes one more after it.
  let running = false;
  let again = false;
  const run = async () => {
    if (running) { again = true; return; }
    running = true;
    try {
      do {
        again = false;
        await refresh();
        document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
      } while (again);
    } catch (e) {
      status("Could not refresh: " + e.message, true);
    } finally {
      running = false;
    }
  };
  const events = new EventSource(el.dataset.live);
  events.addEventListener("change", run);
  events.addEventListener("open", () => { document.body.dataset.live = "open"; });
  window.addEventListener("pagehide", () => events.close());
}

function messages() {
  return Array.from(document.querySelectorAll("article.msg"));
}

function moveFocus(step) {
  const list = messages();
  if (!list.length) return;
  const current = document.activeElement && document.activeElement.closest("article.msg");
  let i = current ? list.indexOf(current) + step : (step > 0 ? 0 : list.length - 1);
  i = Math.max(0, Math.min(list.length - 1, i));
  list[i].focus();
  list[i].scrollIntoView({ block: "start" });
}

document.addEventListener("DOMContentLoaded", () => {
  // (Live pages remember the conversation as written, before times are made local.)
  follow();
  localize(document);
  setInterval(() => {
    for (const t of document.querySelectorAll("time[data-age][datetime]")) {
      const d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d.getTime())) t.textContent = age(d.getTime());
    }
  }, 30000);
  setUpToggles();
  document.body.dataset.ready = "1";

  document.addEventListener("click", async (event) => {
    const target = event.target;
    if (!(target instanceof Element)) return;
    const forkButton = target.closest("button.fork");
    if (forkButton) {
      fork(forkButton.dataset.upTo);
      return;
    }
    const copy = target.closest("button.copy");
    if (copy) {
      try {
        await navigator.clipboard.writeText(copy.dataset.copy);
        copy.textContent = "Copied";
      } catch (e) {
        const code = copy.parentElement.querySelector("code");
        if (code) window.getSelection().selectAllChildren(code);
        copy.textContent = "Press Ctrl+C";
      }
      setTimeout(() => { copy.textContent = "Copy"; }, 2000);
      return;
    }
    const del = target.closest("button.delete");
    if (del) {
      if (!window.confirm("Delete session " + del.dataset.name + " from the store? Its source files stay on disk.")) return;
      try {
        await post(del.dataset.url, {});
        location.assign("/");
      } catch (e) {
        status("Delete failed: " + e.message, true);
      }
      return;
    }
    const clear = target.closest("button.clear-tag");
    if (clear) {
      const form = clear.closest("form");
      try {
        await post(form.dataset.url, { tag: null });
        location.reload();
      } catch (e) {
        status("Clearing the tag failed: " + e.message, true);
      }
    }
  });

  for (const form of document.querySelectorAll("form.act")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const data = Object.fromEntries(new FormData(form).entries());
      status("Saving…");
      try {
        await post(form.dataset.url, data);
        location.reload();
      } catch (e) {
        status(form.dataset.action + " failed: " + e.message, true);
      }
    });
  }

  const login = document.getElementById("login");
  if (login) {
    login.addEventListener("submit", async (event) => {
      event.preventDefault();
      const token = new FormData(login).get("token");
      try {
        await post("/login", { token: token });
        location.assign(sameOriginNext(login.dataset.next || "/", location.origin));
      } catch (e) {
        document.getElementById("login-error").textContent = e.message;
      }
    });
  }

  // "toggle" does not bubble: one listener in the capture phase sees every fold, those of
  // loaded parts included.
  document.addEventListener("toggle", (event) => {
    const details = event.target;
    if (details instanceof HTMLDetailsElement && details.open && details.dataset.src) loadFold(details);
  }, true);

  document.addEventListener("keydown", (event) => {
    const tag = (event.target && event.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/") {
      const search = document.getElementById("quick-search");
      if (search) { event.preventDefault(); search.focus(); }
    } else if (event.key === "j") {
      moveFocus(1);
    } else if (event.key === "k") {
      moveFocus(-1);
    } else if (event.key === "o") {
      const current = document.activeElement && document.activeElement.closest("article.msg");
      if (current) for (const d of current.querySelectorAll("details")) d.open = !d.open;
    }
  });

  window.addEventListener("hashchange", showHash);
  showHash();
});
