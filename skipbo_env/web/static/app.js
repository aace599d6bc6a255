// Skip-Bo in the browser: shows what the server sends and sends back move ids.
// No rules here: the legal moves come from the server (the rules' own list);
// a card is offered only when a legal move starts from it, a pile is a target
// only when a legal move from the chosen card ends there.
"use strict";

const $ = (id) => document.getElementById(id);
const S = {            // page state (window.skipbo, read by the browser tests)
  mode: null, gid: null, seat: null, token: null,
  seen: 0, gameNo: null, queue: [], latest: null, legal: [], animating: false,
  selected: null, busy: false, playing: true, replay: null, frame: 0, timer: null, pollTimer: null,
};
window.skipbo = S;

// ------------------------------------------------------------------ helpers
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}
function showMessage(text, info) {
  const m = $("message");
  if (!text) { m.hidden = true; m.textContent = ""; return; }
  m.hidden = false; m.textContent = text; m.className = info ? "info" : "";
}
async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: `${r.status} ${r.statusText}` }; }
  if (!r.ok) throw new Error(data && data.error ? data.error : `${r.status} ${r.statusText}`);
  return data;
}
function setState(name) { document.body.dataset.state = name; }

// ------------------------------------------------------------------ cards
function colour(face) {
  if (face === "SB") return "sb";
  const n = parseInt(face, 10);
  return n <= 4 ? "blue" : n <= 8 ? "green" : "red";
}
function cardEl(face, extra) {
  const c = el("div", "card " + (extra || ""));
  if (face === null || face === undefined) { c.classList.add("empty"); return c; }
  c.classList.add(colour(face));
  c.dataset.face = face;
  c.textContent = face;
  return c;
}
function backEl(text) { const c = el("div", "card back", text); return c; }
function pileNumbers(count) {  // piles are numbered from 1, as in the move keys (d4>2) and the terminal
  const row = el("div", "numbers");
  for (let i = 1; i <= count; i++) row.appendChild(el("span", null, String(i)));
  return row;
}
function withSize(card, size) { card.appendChild(el("span", "size", String(size))); return card; }

// ------------------------------------------------------------------ the table
function seatOrder(t) {
  const n = t.num_players;
  if (t.me === null) return [...Array(n).keys()];
  const order = [];
  for (let k = 1; k <= n; k++) order.push((t.me + k) % n);
  return order;           // opponents from the left, the seat itself last
}
function renderSeat(t, s) {
  const info = t.seats[s];
  const box = el("div", "seat");
  box.dataset.seat = s;
  if (t.current === s && !t.over) box.classList.add("to-move");
  const name = el("div", "name", info.name);
  if (info.tag && info.tag !== "you") name.appendChild(el("span", "tag", `(${info.tag})`));
  if (t.current === s && !t.over) name.appendChild(el("span", "turn", "● to move"));
  box.appendChild(name);
  const body = el("div", "seat-body");
  const own = s === t.me, partner = t.me !== null && info.tag === "partner";
  // stock: top face up, size
  const sg = el("div", "group");
  sg.appendChild(el("span", "label", "stock"));
  const stock = info.stock_top === null ? cardEl(null) : cardEl(info.stock_top);
  withSize(stock, info.stock_size);
  stock.classList.add("stock");
  if (own) stock.dataset.src = "stock";
  else if (partner) stock.dataset.src = "partner_stock";
  sg.appendChild(stock);
  body.appendChild(sg);
  // discard piles, fanned
  const dg = el("div", "group");
  dg.appendChild(el("span", "label", "discard piles"));
  dg.appendChild(pileNumbers(info.discards.length));
  const piles = el("div", "piles");
  info.discards.forEach((pile, d) => {
    const fan = el("div", "fan");
    fan.dataset.seat = s; fan.dataset.discard = d;
    if (own) { fan.dataset.target = "discard"; fan.dataset.pile = d; }
    if (pile.length === 0) fan.appendChild(cardEl(null));
    pile.forEach((face, i) => {
      const c = cardEl(face);
      if (i === pile.length - 1 && (own || partner)) {
        c.dataset.src = own ? "discard" : "partner_discard"; c.dataset.pile = d;
      }
      fan.appendChild(c);
    });
    piles.appendChild(fan);
  });
  dg.appendChild(piles);
  body.appendChild(dg);
  // hand: faces when shown, else backs and a count
  const hg = el("div", "group");
  hg.appendChild(el("span", "label", own ? "your hand" : `hand (${info.hand_size})`));
  const hand = el("div", "hand");
  if (info.hand) {
    info.hand.forEach((face) => {
      const c = cardEl(face, own ? "" : "small");
      if (own) { c.dataset.src = "hand"; c.dataset.card = face; }
      hand.appendChild(c);
    });
  } else if (info.hand_size > 0) {
    hand.appendChild(withSize(backEl(""), info.hand_size));
  }
  hg.appendChild(hand);
  body.appendChild(hg);
  box.appendChild(body);
  return box;
}
function renderTable(container, t) {
  container.replaceChildren();
  const order = seatOrder(t);
  const others = t.me === null ? order : order.slice(0, -1);
  const top = el("div", "seats");
  others.forEach((s) => top.appendChild(renderSeat(t, s)));
  container.appendChild(top);
  const center = el("div", "center");
  const bg = el("div", "group");
  bg.appendChild(el("span", "label", "building piles"));
  bg.appendChild(pileNumbers(t.building.length));
  const piles = el("div", "piles");
  t.building.forEach((value, b) => {
    const c = value ? cardEl(String(value)) : cardEl(null);
    if (!value) c.textContent = "1";
    c.dataset.target = "build"; c.dataset.pile = b; c.dataset.building = b;
    piles.appendChild(c);
  });
  bg.appendChild(piles);
  center.appendChild(bg);
  const draw = el("div", "group");
  draw.appendChild(el("span", "label", "draw pile"));
  draw.appendChild(withSize(backEl(""), t.draw_size));
  draw.querySelector(".card").id = "draw-pile";
  center.appendChild(draw);
  const done = el("div", "group");
  done.appendChild(el("span", "label", "completed"));
  const dc = el("div", "card empty", "");
  dc.id = "completed-pile";
  done.appendChild(withSize(dc, t.completed_size));
  center.appendChild(done);
  container.appendChild(center);
  if (t.me !== null) {
    const mine = el("div", "seats");
    mine.appendChild(renderSeat(t, t.me));
    container.appendChild(mine);
  }
}
function flashMove(container, m) {
  if (!m) return;
  let target = null;
  if (m.target === "build") target = container.querySelector(`[data-building="${m.pile}"]`);
  else if (m.target === "discard") {
    const fan = container.querySelector(`.fan[data-seat="${m.seat}"][data-discard="${m.pile}"]`);
    target = fan && fan.lastElementChild;
  }
  if (target) target.classList.add("flash");
}
function matchText(match) {
  const parts = match.sides.map((side, i) => `${side} ${match.scores[i]}`);
  let text = `Match to ${match.target}: ` + parts.join(" · ");
  if (match.games.length) text += ` (after ${match.games.length} game${match.games.length > 1 ? "s" : ""})`;
  if (match.over) text += " — match over";
  return text;
}

// ------------------------------------------------------------------ routes
function route() {
  clearTimeout(S.timer); clearTimeout(S.pollTimer);
  showMessage("");
  const parts = location.hash.replace(/^#/, "").split("/");
  for (const v of ["new", "game", "replay"]) $("view-" + v).hidden = true;
  if (parts[0] === "play" && parts.length === 4) startGame("play", parts[1], parseInt(parts[2], 10), parts[3]);
  else if (parts[0] === "watch" && parts.length === 2) startGame("watch", parts[1], null, null);
  else if (parts[0] === "replay") { $("view-replay").hidden = false; loadRecordList(); setState("replay"); }
  else { $("view-new").hidden = false; setupForm(); setState("new"); }
}
window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", () => { wireControls(); route(); });

// ------------------------------------------------------------------ new game form
let agents = null;
async function setupForm() {
  if (!agents) {
    try { agents = await api("/api/agents"); } catch (e) { showMessage(e.message); return; }
    $("f-target").value = agents.match_target;
  }
  drawSeats();
}
function drawSeats() {
  const n = parseInt($("f-players").value, 10);
  const box = $("f-seats");
  const old = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  for (let s = 0; s < n; s++) {
    const label = el("label", null, `player_${s} `);
    const sel = el("select");
    sel.id = `f-seat-${s}`;
    // a shipped network plays one number of players: offer it only at that table
    const fits = agents.agents.filter((a) => !(a in agents.players) || agents.players[a] === n);
    for (const opt of [agents.human, ...fits]) sel.appendChild(el("option", null, opt));
    const kept = old[s] && (old[s] === agents.human || fits.includes(old[s])) ? old[s] : null;
    sel.value = kept || (s === 0 ? agents.human : (fits.includes("greedy") ? "greedy" : fits[0]));
    label.appendChild(sel);
    box.appendChild(label);
  }
}
async function submitForm(ev) {
  ev.preventDefault();
  const n = parseInt($("f-players").value, 10);
  const body = {
    seats: [...Array(n).keys()].map((s) => $(`f-seat-${s}`).value),
    partner: $("f-partner").checked, short: $("f-short").checked,
    target: parseInt($("f-target").value, 10) || agents.match_target,
  };
  if ($("f-seed").value !== "") body.seed = parseInt($("f-seed").value, 10);
  try {
    const g = await api("/api/games", body);
    if (g.mode === "watch") { location.hash = g.watch_url.slice(1); return; }
    sessionStorage.setItem("links:" + g.game_id, JSON.stringify(g.links));
    location.hash = g.links[0].url.slice(1);
  } catch (e) { showMessage(e.message); }
}

// ------------------------------------------------------------------ a game: play and watch
function gameQuery(extra) {
  const q = new URLSearchParams({ since: String(S.seen), ...(extra || {}) });
  if (S.mode === "play") { q.set("seat", S.seat); q.set("token", S.token); }
  return `/api/games/${S.gid}?` + q.toString();
}
function startGame(mode, gid, seat, token) {
  Object.assign(S, { mode, gid, seat, token, seen: 0, gameNo: null, queue: [], latest: null, legal: [],
                     selected: null, busy: false, animating: false, playing: true });
  $("view-game").hidden = false;
  $("play-controls").hidden = mode !== "play";
  $("watch-controls").hidden = mode !== "watch";
  $("moves-box").hidden = mode !== "play";
  $("w-play").textContent = "Pause";
  $("log").replaceChildren();
  $("g-table").replaceChildren();
  showLinks();
  setState("busy");
  fetchGame(mode === "watch" ? 0 : null);
}
function showLinks() {
  const box = $("links");
  const links = JSON.parse(sessionStorage.getItem("links:" + S.gid) || "null");
  if (!links || links.length < 2) { box.hidden = true; return; }
  box.replaceChildren(el("div", null, "Each person opens their own seat's link:"));
  for (const l of links) {
    const row = el("div", null, `player_${l.seat}: `);
    const url = location.origin + l.url;
    const a = el("a", null, url); a.href = url; a.target = "_blank";
    row.appendChild(a);
    box.appendChild(row);
  }
  box.hidden = false;
}
async function fetchGame(advance) {
  clearTimeout(S.pollTimer);
  try {
    const extra = advance ? { advance: String(advance) } : {};
    take(await api(gameQuery(extra)));
  } catch (e) {
    showMessage(e.message);
    if (S.mode === "play") S.pollTimer = setTimeout(() => fetchGame(null), 3000);
  }
}
function take(data) {
  if (S.gameNo !== null && data.game_no !== S.gameNo) { S.queue = []; $("log").replaceChildren(); }
  if (S.gameNo === null || data.game_no !== S.gameNo) {
    S.gameNo = data.game_no;
    if (data.since === null || data.since === undefined || data.steps.length === 0) S.seen = data.moves;
  }
  for (const st of data.steps) {
    if (st.index >= S.seen) S.queue.push(st);
  }
  S.seen = Math.max(S.seen, data.moves);
  S.latest = data;
  if (!data.table.over) $("g-match").textContent = matchText(data.match);  // a result waits for the animation
  animate();
}
function pace() { return S.mode === "watch" ? parseInt($("w-speed").value, 10) : parseInt($("pace").value, 10); }
function logMove(st) {
  const li = el("li", null, `${st.name}: ${st.text}`);
  $("log").appendChild(li);
  li.scrollIntoView({ block: "nearest" });
}
function animate() {
  if (S.animating) return;
  if (S.mode === "watch" && !S.playing && !S.stepOnce) { showLatest(false); return; }
  const st = S.queue.shift();
  if (!st) { showLatest(true); return; }
  S.animating = true;
  S.legal = []; setState("busy");
  renderTable($("g-table"), st.table);
  flashMove($("g-table"), st);
  $("g-status").textContent = st.table.status;
  logMove(st);
  const own = S.mode === "play" && st.seat === S.seat;
  S.timer = setTimeout(() => {
    S.animating = false;
    if (S.stepOnce) { S.stepOnce = false; showLatest(false); return; }
    animate();
  }, own ? 0 : pace());
}
function showLatest(settle) {
  const d = S.latest;
  if (!d) return;
  if (S.queue.length) return;
  if (S.mode === "watch") {
    if (!d.table.over && !d.error && S.playing && settle) {   // ask for the next moves
      S.pollTimer = setTimeout(() => fetchGame(10), 0);
      return;
    }
  }
  renderTable($("g-table"), d.table);
  $("g-status").textContent = d.table.status;
  $("g-match").textContent = matchText(d.match);
  if (d.error) showMessage("The game stopped: " + d.error);
  S.legal = d.legal;
  S.selected = null;
  wireMoves();
  const over = d.table.over;
  $("next-game").hidden = !(over && !d.match.over);
  const dl = $("download");
  dl.hidden = !over;  // the record holds the whole deal: sent when the game is over
  const q = S.mode === "play" ? `?seat=${S.seat}&token=${encodeURIComponent(S.token)}` : "";
  dl.href = `/api/games/${S.gid}/record${q}`;
  dl.download = `skipbo-game${d.game_no + 1}.json`;
  if (over) {
    const pts = d.match.points ? " Points: " + d.match.sides.map((s, i) => `${s} ${d.match.points[i]}`).join(", ") + "." : "";
    showMessage(d.table.status + "." + pts, true);
    setState("over");
  } else if (S.mode === "play") {
    setState(S.legal.length ? "ready" : "waiting");
    if (!S.legal.length) S.pollTimer = setTimeout(() => fetchGame(null), 1000);
  } else {
    setState(S.playing ? "busy" : "paused");
  }
}

// ---- moves: offer exactly the sources and targets of the server's legal moves
function srcKey(src, card, pile) {
  if (src === "hand") return `hand:${card}`;
  if (src === "discard" || src === "partner_discard") return `${src}:${pile}`;
  return src;
}
function moveSrcKey(m) { return srcKey(m.source, m.card, m.from_pile); }
function elSrcKey(e) { return srcKey(e.dataset.src, e.dataset.card, e.dataset.pile); }
function targetEl(m) {
  if (m.target === "build") return $("g-table").querySelector(`[data-target="build"][data-pile="${m.pile}"]`);
  if (m.target === "discard") return $("g-table").querySelector(`.fan[data-target="discard"][data-pile="${m.pile}"]`);
  return null;
}
function wireMoves() {
  const table = $("g-table");
  const sources = new Set(S.legal.filter((m) => m.source).map(moveSrcKey));
  for (const e of table.querySelectorAll("[data-src]")) {
    if (!sources.has(elSrcKey(e))) continue;
    e.classList.add("playable");
    e.draggable = true;
    e.addEventListener("click", (ev) => {
      if (e.closest(".droppable")) return;          // a card on a target pile: the pile takes the click
      ev.stopPropagation();
      if (e.classList.contains("selected")) { clearSelection(); return; }
      select(elSrcKey(e), e);
    });
    e.addEventListener("dragstart", (ev) => { ev.dataTransfer.setData("text/plain", elSrcKey(e)); select(elSrcKey(e), e); });
  }
  const end = S.legal.find((m) => m.target === "end");
  $("end-turn").hidden = !end;
  const box = $("moves");
  box.replaceChildren();
  for (const m of S.legal) {
    const b = el("button", null, m.key);
    b.type = "button"; b.title = m.text;
    b.addEventListener("click", () => sendMove(m.id));
    box.appendChild(b);
  }
}
function clearSelection() {
  for (const x of $("g-table").querySelectorAll(".selected, .droppable")) {
    x.classList.remove("selected", "droppable", "over");
    x.onclick = null; x.ondragover = null; x.ondrop = null; x.ondragleave = null;
  }
  S.selected = null;
}
function select(key, e) {
  clearSelection();
  S.selected = key;
  e.classList.add("selected");
  for (const m of S.legal.filter((mm) => mm.source && moveSrcKey(mm) === key)) {
    const t = targetEl(m);
    if (!t) continue;
    t.classList.add("droppable");
    t.onclick = (ev) => { ev.stopPropagation(); sendMove(m.id); };
    t.ondragover = (ev) => { ev.preventDefault(); t.classList.add("over"); };
    t.ondragleave = () => t.classList.remove("over");
    t.ondrop = (ev) => { ev.preventDefault(); sendMove(m.id); };
  }
}
async function sendMove(id) {
  if (S.busy) return;
  S.busy = true; S.legal = []; setState("busy");
  try {
    const data = await api(`/api/games/${S.gid}/move`, { seat: S.seat, token: S.token, action: id, seen: S.seen });
    showMessage("");
    take(data);
  } catch (e) {
    showMessage(e.message);
    await fetchGame(null);
  } finally { S.busy = false; }
}

// ------------------------------------------------------------------ replay
async function loadRecordList() {
  const box = $("r-list");
  try {
    const data = await api("/api/records");
    box.replaceChildren();
    if (!data.records.length) return;
    box.appendChild(el("span", null, "or a record from the server: "));
    const sel = el("select"); sel.id = "r-select";
    sel.appendChild(el("option", null, "—"));
    for (const r of data.records) { const o = el("option", null, r.name); o.value = r.n; sel.appendChild(o); }
    sel.addEventListener("change", async () => {
      if (sel.value === "—") return;
      try { openReplay(await api(`/api/records/${sel.value}`)); } catch (e) { showMessage(e.message); }
    });
    box.appendChild(sel);
  } catch (e) { showMessage(e.message); }
}
async function openFile(file) {
  showMessage("");
  let data;
  try { data = JSON.parse(await file.text()); } catch (e) { showMessage(`${file.name}: not JSON (${e.message})`); return; }
  try { openReplay(await api("/api/replay", data)); } catch (e) { showMessage(`${file.name}: ${e.message}`); }
}
function openReplay(rep) {
  S.replay = rep; S.frame = 0;
  $("r-player").hidden = false;
  $("r-slider").max = rep.frames.length - 1;
  showFrame(0);
}
function showFrame(i) {
  const rep = S.replay;
  if (!rep) return;
  i = Math.max(0, Math.min(rep.frames.length - 1, i));
  S.frame = i;
  const t = rep.frames[i];
  renderTable($("r-table"), t);
  const m = i > 0 ? rep.moves[i - 1] : null;
  flashMove($("r-table"), m);
  $("r-status").textContent = t.status;
  $("r-move").textContent = m ? `move ${i}: ${m.name} ${m.text} [${m.key}]` : `${rep.players.length} players: ${rep.players.join(", ")}`;
  $("r-pos").textContent = `${i} / ${rep.frames.length - 1}`;
  $("r-slider").value = i;
  setState("replay");
  document.body.dataset.frame = String(i);
}

// ------------------------------------------------------------------ controls
function wireControls() {
  $("f-players").addEventListener("change", drawSeats);
  $("new-form").addEventListener("submit", submitForm);
  const showPace = () => { $("pace-text").textContent = `${$("pace").value} ms`; $("w-speed-text").textContent = `${$("w-speed").value} ms`; };
  const saved = localStorage.getItem("pace");
  if (saved !== null) $("pace").value = saved;
  $("pace").addEventListener("input", () => { localStorage.setItem("pace", $("pace").value); showPace(); });
  $("w-speed").addEventListener("input", showPace);
  showPace();
  $("end-turn").addEventListener("click", () => {
    const end = S.legal.find((m) => m.target === "end");
    if (end) sendMove(end.id);
  });
  $("w-play").addEventListener("click", () => {
    S.playing = !S.playing;
    $("w-play").textContent = S.playing ? "Pause" : "Play";
    if (S.playing) animate(); else setState("paused");
  });
  $("w-step").addEventListener("click", async () => {
    if (S.playing) { S.playing = false; $("w-play").textContent = "Play"; }
    if (S.animating) return;
    if (!S.queue.length && S.latest && !S.latest.table.over) {
      try { take(await api(gameQuery({ advance: "1" }))); } catch (e) { showMessage(e.message); return; }
    }
    S.stepOnce = true;
    animate();
  });
  $("next-game").addEventListener("click", async () => {
    try {
      const body = S.mode === "play" ? { seat: S.seat, token: S.token } : {};
      showMessage("");
      S.queue = []; S.seen = 0;
      const data = await api(`/api/games/${S.gid}/next`, body);
      S.gameNo = null;
      take(data);
    } catch (e) { showMessage(e.message); }
  });
  $("r-file").addEventListener("change", (ev) => { if (ev.target.files[0]) openFile(ev.target.files[0]); });
  $("r-first").addEventListener("click", () => showFrame(0));
  $("r-prev").addEventListener("click", () => showFrame(S.frame - 1));
  $("r-next").addEventListener("click", () => showFrame(S.frame + 1));
  $("r-last").addEventListener("click", () => showFrame(Infinity));
  $("r-slider").addEventListener("input", () => showFrame(parseInt($("r-slider").value, 10)));
  document.addEventListener("keydown", (ev) => {
    if ($("view-replay").hidden || !S.replay || ev.target.tagName === "INPUT") return;
    const keys = { ArrowLeft: S.frame - 1, ArrowRight: S.frame + 1, Home: 0, End: Infinity };
    if (ev.key in keys) { ev.preventDefault(); showFrame(keys[ev.key]); }
  });
}
