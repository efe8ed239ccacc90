// sessiondb web viewer: actions (JSON POSTs to this server), folds loaded when opened
// (tool calls, records, sub-agents), copy buttons, links to a message opening its folds,
// keyboard navigation.
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
