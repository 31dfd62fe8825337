// Interactive behaviour of fgtool's SVG flamegraphs: hover details, click to
// zoom, regex search (button, Ctrl-F, F3), and the view kept in the URL
// (?s=REGEX&x=START&y=Y&ic=1) so that a link reproduces it. Plain ECMAScript
// for SVG 1.1; every per-frame datum is read from element attributes
// (fg:x, fg:w in counts, fg:c category, fg:s the frame's own drawn width)
// and <title> text, never from here.
"use strict";
var fgns = "http://fgtool.invalid/ns";
var svg, frames, details, searchbtn, unzoombtn, matchedtxt, icbtn, legend;
var xpad = 10, graphwidth = 1180, fontsize = 12, fontwidth = 0.59, total = 1, inverted = false, nametype = "";
var zoomed = null, currentSearch = null, ignorecase = false;
// Search highlight (palette.h kSearchHighlight): no category uses it, and
// black and white labels both keep 4.5:1 contrast on it.
var HIGHLIGHT = "rgb(208,0,208)";
// Per-frame geometry (fg:x, fg:w, rect y) and names, parsed once on first
// use: re-reading attributes of every frame on each zoom is what made large
// profiles (100k frames) slow. `moved` lists the frames zoom() re-placed, so
// that unzoom() restores only those instead of every frame.
var fx = null, fw, fy, fnames, moved = [], is_moved;
function attr(e, k) { return e.getAttributeNS(fgns, k) || e.getAttribute("fg:" + k); }
function num(e, k) { return parseFloat(attr(e, k)); }
function child(e, tag) {
  for (var c = e.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && c.localName === tag) return c;
  return null;
}

function init(evt) {
  svg = document.documentElement;
  var cfg = document.getElementById("fg_config");
  xpad = num(cfg, "xpad");
  graphwidth = num(cfg, "width") - 2 * xpad;
  fontsize = num(cfg, "fontsize");
  fontwidth = num(cfg, "fontwidth");
  total = num(cfg, "total");
  inverted = attr(cfg, "inverted") === "1";
  nametype = attr(cfg, "nametype") || "";
  frames = document.getElementById("frames");
  details = document.getElementById("details");
  searchbtn = document.getElementById("search");
  unzoombtn = document.getElementById("unzoom");
  matchedtxt = document.getElementById("matched");
  icbtn = document.getElementById("ignorecase");
  legend = document.getElementById("legend");

  frames.addEventListener("mouseover", function (e) {
    var g = frame_of(e.target);
    if (g) show_details(describe(g));
  });
  frames.addEventListener("mouseout", function (e) { set_text(details, " "); });
  frames.addEventListener("click", function (e) {
    var g = frame_of(e.target);
    if (g) { zoom(g); update_url(); }
  });
  unzoombtn.addEventListener("click", function () { unzoom(); update_url(); });
  // While a search is shown the button reads "Reset Search" and does that
  // (as in flamegraph.pl); Ctrl-F / F3 still edit the current term.
  searchbtn.addEventListener("click", function () {
    if (currentSearch !== null) { reset_search(); update_url(); } else search_prompt();
  });
  icbtn.addEventListener("click", function () {
    ignorecase = !ignorecase;
    if (ignorecase) icbtn.classList.add("show"); else icbtn.classList.remove("show");
    if (currentSearch !== null) search(currentSearch);
    update_url();
  });
  if (legend) legend.addEventListener("click", function (e) {
    for (var n = e.target; n && n !== legend; n = n.parentNode) {
      var cat = n.getAttribute && attr(n, "cat");
      if (cat) { search("cat:" + cat.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")); update_url(); return; }
    }
  });
  window.addEventListener("keydown", function (e) {
    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {
      e.preventDefault();
      search_prompt();
    } else if (e.keyCode === 27 && currentSearch !== null) {
      reset_search();
      update_url();
    }
  });
  restore_from_url();
  // Parse the per-frame geometry now, after the first paint, rather than on
  // the first click (about a second for 100k frames).
  setTimeout(geometry, 0);
}

function frame_of(n) {
  for (; n && n !== frames; n = n.parentNode) if (n.nodeType === 1 && n.localName === "g" && attr(n, "w") !== null) return n;
  return null;
}
function title_of(g) { var t = child(g, "title"); return t ? t.textContent : ""; }
function name_of(g) { return title_of(g).replace(/ \([^(]*\)$/, ""); }
function set_text(e, s) { e.textContent = s; }
// The details line shares the bottom row with "Matched": cut it short
// ("..") where it would run into that text or off the image.
function show_details(s) {
  set_text(details, s);
  var room = graphwidth - (matchedtxt.textContent.trim() ? matchedtxt.getComputedTextLength() + 2 * fontsize : 0);
  var len = details.getComputedTextLength();
  if (len <= room || !(len > 0)) return;
  var n = Math.floor(s.length * room / len);
  for (; n > 3; n = Math.floor(n * 0.95)) {
    set_text(details, s.substring(0, n - 2) + "..");
    if (details.getComputedTextLength() <= room) return;
  }
}
// One decimal as the legend prints shares (format_share1 in svg_document.cpp).
function share1(part, whole) {
  var v = whole > 0 ? 100 * part / whole : 0, r = Math.floor(v * 10 + 0.5) / 10;
  return (v > 0 && r === 0) ? "<0.1%" : r.toFixed(1) + "%";
}
// flamegraph.pl's label truncation, except that qualified C++ names ending
// in an identifier keep their tail (the function name); as append_label().
function label(name, chars) {
  if (chars < 3) return "";
  if (name.length <= chars) return name;
  if (name.indexOf("::") >= 0 && /[A-Za-z0-9_]$/.test(name)) return ".." + name.substring(name.length - (chars - 2));
  return name.substring(0, chars - 2) + "..";
}

function describe(g) {
  var s = (nametype ? nametype + " " : "") + title_of(g);
  if (zoomed && zoomed !== g && !g.classList.contains("parent"))
    s += " [" + (100 * num(g, "w") / num(zoomed, "w")).toFixed(2) + "% of zoomed frame]";
  return s;
}
function rect_y(g) { return parseFloat(child(g, "rect").getAttribute("y")); }
function geometry() {
  if (fx) return;
  var kids = frames.children, n = kids.length;
  fx = new Array(n); fw = new Array(n); fy = new Array(n); fnames = new Array(n); is_moved = new Uint8Array(n);
  for (var i = 0; i < n; i++) {
    var e = kids[i];
    fx[i] = num(e, "x"); fw[i] = num(e, "w"); fy[i] = rect_y(e); fnames[i] = name_of(e);
  }
}

function place(g, x, w, name) {
  var r = child(g, "rect"), t = child(g, "text");
  r.setAttribute("x", x.toFixed(1));
  r.setAttribute("width", Math.max(w, 0).toFixed(1));
  if (t) {
    t.setAttribute("x", (x + 3).toFixed(1));
    t.textContent = label(name, Math.floor(w / (fontsize * fontwidth)));
  }
}

function zoom(g) {
  geometry();
  var zx = num(g, "x"), zw = num(g, "w"), zy = rect_y(g), eps = zw * 1e-9;
  zoomed = g;
  unzoombtn.classList.remove("hide");
  var ratio = graphwidth / zw, kids = frames.children;
  for (var i = 0; i < kids.length; i++) {
    var e = kids[i], ex = fx[i], ew = fw[i], ey = fy[i];
    var rootward = inverted ? ey < zy : ey > zy;
    if (rootward) {
      if (ex <= zx + eps && ex + ew >= zx + zw - eps) {
        e.classList.add("parent");
        e.classList.remove("hide");
        place(e, xpad, graphwidth, fnames[i]);
        if (!is_moved[i]) { is_moved[i] = 1; moved.push(i); }
      } else e.classList.add("hide");
    } else if (ex >= zx - eps && ex + ew <= zx + zw + eps) {
      e.classList.remove("parent");
      e.classList.remove("hide");
      place(e, xpad + (ex - zx) * ratio, ew * ratio, fnames[i]);
      if (!is_moved[i]) { is_moved[i] = 1; moved.push(i); }
    } else e.classList.add("hide");
  }
  if (currentSearch !== null) search(currentSearch);
}

function unzoom() {
  zoomed = null;
  unzoombtn.classList.add("hide");
  var kids = frames.children, scale = graphwidth / total;
  for (var i = 0; i < kids.length; i++) {
    kids[i].classList.remove("parent");
    kids[i].classList.remove("hide");
  }
  // Frames never re-placed still hold the geometry the SVG was written with.
  for (var j = 0; j < moved.length; j++) {
    var k = moved[j];
    place(kids[k], xpad + fx[k] * scale, fw[k] * scale, fnames[k]);
    is_moved[k] = 0;
  }
  moved = [];
  if (currentSearch !== null) search(currentSearch);
}

function search_prompt() {
  var term = prompt("Search for (regular expression; cat:NAME for a category; empty to reset):",
                    currentSearch === null ? "" : currentSearch);
  if (term === null) return;
  if (term === "") reset_search(); else search(term);
  update_url();
}

function reset_search() {
  currentSearch = null;
  var kids = frames.children;
  for (var i = 0; i < kids.length; i++) {
    var r = child(kids[i], "rect"), orig = kids[i].getAttribute("data-fill");
    if (orig !== null) { r.setAttribute("fill", orig); kids[i].removeAttribute("data-fill"); }
  }
  searchbtn.classList.remove("show");
  set_text(searchbtn, "Search");
  set_text(matchedtxt, " ");
}

function search(term) {
  var category = term.indexOf("cat:") === 0, re;
  try {
    re = new RegExp(category ? "^(?:" + term.substring(4) + ")$" : term, ignorecase ? "i" : "");
  } catch (err) {
    alert("Invalid regular expression: " + err.message);
    return;
  }
  reset_search();
  currentSearch = term;
  geometry();
  var kids = frames.children, hits = [], own = 0, zown = 0;
  var lo = zoomed ? num(zoomed, "x") : 0, hi = zoomed ? lo + num(zoomed, "w") : total, eps = (hi - lo) * 1e-9;
  for (var i = 0; i < kids.length; i++) {
    var e = kids[i], subject = category ? (attr(e, "c") || "") : fnames[i];
    if (!re.test(subject)) continue;
    var r = child(e, "rect");
    e.setAttribute("data-fill", r.getAttribute("fill"));
    r.setAttribute("fill", HIGHLIGHT);
    hits.push([fx[i], fw[i]]);
    if (category) {
      // A category covers the width drawn in its colour: each frame's own part.
      var s = num(e, "s") || 0;
      own += s;
      if (fx[i] >= lo - eps && fx[i] + fw[i] <= hi + eps) zown += s;
    }
  }
  // Nested matches (a match inside a match) must not count twice: merge the
  // [x, x+w) intervals before summing.
  hits.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  var covered = 0, zcovered = 0, end = -Infinity;
  for (var j = 0; j < hits.length; j++) {
    var s0 = Math.max(hits[j][0], end), f = hits[j][0] + hits[j][1];
    if (f > s0) {
      covered += f - s0;
      zcovered += Math.max(0, Math.min(f, hi) - Math.max(s0, lo));
      end = f;
    }
  }
  if (category) { covered = own; zcovered = zown; }
  searchbtn.classList.add("show");
  set_text(searchbtn, "Reset Search");
  var text = "Matched: " + (category ? share1(covered, total) : (100 * covered / total).toFixed(1) + "%");
  if (zoomed) text += " (" + (category ? share1(zcovered, hi - lo) : (100 * zcovered / (hi - lo)).toFixed(1) + "%") + " of zoomed)";
  set_text(matchedtxt, hits.length ? text : "Matched: 0% (no match)");
}

function params() {
  var out = {}, q = (document.location && document.location.search || "").replace(/^\?/, "");
  if (!q) return out;
  var parts = q.split("&");
  for (var i = 0; i < parts.length; i++) {
    var kv = parts[i].split("="), k = decodeURIComponent(kv[0]);
    try { out[k] = decodeURIComponent((kv[1] || "").replace(/\+/g, " ")); } catch (e) {}
  }
  return out;
}

function update_url() {
  try {
    var p = params(), q = [];
    delete p.x; delete p.y; delete p.s; delete p.ic;
    for (var k in p) q.push(encodeURIComponent(k) + "=" + encodeURIComponent(p[k]));
    if (zoomed) {
      q.push("x=" + encodeURIComponent(attr(zoomed, "x")));
      q.push("y=" + encodeURIComponent(child(zoomed, "rect").getAttribute("y")));
    }
    if (currentSearch !== null) q.push("s=" + encodeURIComponent(currentSearch));
    if (ignorecase) q.push("ic=1");
    var url = document.location.pathname + (q.length ? "?" + q.join("&") : "") + (document.location.hash || "");
    history.replaceState(null, "", url);
  } catch (e) {}
}

function restore_from_url() {
  var p = params();
  if (p.ic === "1") { ignorecase = true; icbtn.classList.add("show"); }
  if (p.x !== undefined && p.y !== undefined) {
    var x = parseFloat(p.x), y = parseFloat(p.y), kids = frames.children;
    geometry();
    for (var i = 0; i < kids.length; i++) {
      var e = kids[i];
      if (Math.abs(fx[i] - x) <= 1e-9 * Math.max(1, Math.abs(x)) && Math.abs(fy[i] - y) < 0.05) {
        zoom(e);
        break;
      }
    }
  }
  if (p.s) search(p.s);
}
