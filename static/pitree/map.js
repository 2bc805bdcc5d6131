// The tree map: fetches the map data of a session, lays it out with d3-hierarchy's tree layout and
// draws it as SVG. A node is a link to the conversation at that entry; hovering or focusing it shows a
// preview; in pick mode, clicks pick 2–4 nodes for a comparison instead. Text from the session only
// ever reaches the page through textContent (never as HTML).
(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const SIBLING_GAP = 34; // px between neighbouring nodes
  const LEVEL_GAP = 70; // px between a node and its drawn children
  const MARGIN = 40;
  const MAX_PICKS = 4;
  const CAPTION_CHARS = 24;
  const ROLE = { user: "You", assistant: "Assistant", tool: "Tool", other: "Entry", fork: "Fork", start: "Start" };

  const frame = document.getElementById("map");
  if (!frame) return;
  const note = document.getElementById("map-note");
  const pickBox = document.getElementById("map-pick");
  const pickedText = document.getElementById("map-picked");
  const compareLink = document.getElementById("map-compare");
  const clearButton = document.getElementById("map-clear");
  let compareUrl = "";
  let picked = []; // refs of the picked nodes, in the order picked

  function el(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function shorten(text, size) {
    return text.length > size ? `${text.slice(0, size - 1)}…` : text;
  }

  // ---- tooltip ----------------------------------------------------------------------------------
  const tip = document.createElement("div");
  tip.className = "map-tip";
  tip.hidden = true;
  tip.setAttribute("role", "tooltip");
  frame.append(tip);

  function showTip(target, d) {
    const lines = [`${ROLE[d.kind] || d.kind}${d.label ? ` · ${d.label}` : ""}${d.isPosition ? " · you are here" : ""}`];
    if (d.folded) lines.push(`(${d.folded} entr${d.folded === 1 ? "y" : "ies"} folded above)`);
    if (d.branches) lines.push(`${d.branches} branches start here`);
    if (d.text) lines.push(d.text);
    tip.textContent = lines.join("\n");
    const box = target.getBoundingClientRect();
    const outer = frame.getBoundingClientRect();
    tip.style.left = `${box.right - outer.left + frame.scrollLeft + 8}px`;
    tip.style.top = `${box.top - outer.top + frame.scrollTop - 4}px`;
    tip.hidden = false;
  }

  function hideTip() {
    tip.hidden = true;
  }

  // ---- picking --------------------------------------------------------------------------------
  function updatePicks() {
    frame.querySelectorAll(".map-node").forEach((node) => {
      node.classList.toggle("is-picked", node.dataset.ref !== "" && picked.includes(node.dataset.ref));
    });
    const ready = picked.length >= 2 && picked.length <= MAX_PICKS;
    const query = new URLSearchParams(picked.map((ref) => ["e", ref]));
    query.append("end", "exact");
    // Not ready, the link has no href (an empty one would reload the map and lose the picks).
    if (ready) compareLink.href = `${compareUrl}?${query}`;
    else compareLink.removeAttribute("href");
    compareLink.setAttribute("aria-disabled", ready ? "false" : "true");
    clearButton.hidden = picked.length === 0;
    if (pickBox.checked) {
      pickedText.textContent = picked.length
        ? `${picked.length} picked${picked.length < 2 ? ": pick at least one more" : ""} (at most ${MAX_PICKS}).`
        : `Click 2 to ${MAX_PICKS} nodes to compare their branches.`;
    } else {
      pickedText.textContent = picked.length ? `${picked.length} picked.` : "Click a node to open the conversation there.";
    }
  }

  function togglePick(ref) {
    const at = picked.indexOf(ref);
    if (at >= 0) picked.splice(at, 1);
    else if (picked.length < MAX_PICKS) picked.push(ref);
    updatePicks();
  }

  pickBox.addEventListener("change", updatePicks);
  clearButton.addEventListener("click", () => {
    picked = [];
    updatePicks();
  });

  // ---- drawing ------------------------------------------------------------------------------------
  function caption(d) {
    return d.label || (d.kind === "fork" ? `fork: ${d.text}` : d.isPosition ? "you are here" : "");
  }

  function link(from, to) {
    const middle = (from.y + to.y) / 2;
    return `M${from.x},${from.y} C${from.x},${middle} ${to.x},${middle} ${to.x},${to.y}`;
  }

  function draw(data) {
    const root = d3
      .stratify()
      .id((d) => String(d.key))
      .parentId((d) => (d.parentKey === null ? null : String(d.parentKey)))(data.nodes);
    // A node's caption (or its edge's "+N") runs to its right, a branch point's "compare" link sits to
    // its left: the left one of two neighbours needs room for the first, the right one for the second.
    // d3's tree calls separation(a, b) with a left of b when it compares the contours of two subtrees,
    // but with a right of b when it places a node after its left sibling (tree.js in d3-hierarchy
    // 3.1.3). It only ever separates nodes of one depth, and of those the left one comes first in
    // pre-order: that says which is which.
    const order = new Map();
    root.eachBefore((n) => order.set(n, order.size));
    const room = (n) => {
      const text = caption(n.data) ? Math.min(caption(n.data).length, CAPTION_CHARS) * 6.4 + 14 : 0;
      const count = n.data.folded ? String(n.data.folded).length * 6 + 14 : 0;
      return Math.max(text, count) / SIBLING_GAP;
    };
    const separation = (a, b) => {
      const [leftNode, rightNode] = order.get(a) < order.get(b) ? [a, b] : [b, a];
      return (a.parent === b.parent ? 1 : 1.5) + room(leftNode) + (rightNode.data.branchesUrl ? 0.5 : 0);
    };
    d3.tree().nodeSize([SIBLING_GAP, LEVEL_GAP]).separation(separation)(root);
    let left = Infinity;
    let right = -Infinity;
    root.each((n) => {
      left = Math.min(left, n.x);
      right = Math.max(right, n.x);
    });
    const width = right - left + 2 * MARGIN + 220; // room for the labels right of the nodes
    const height = root.height * LEVEL_GAP + 2 * MARGIN;
    // A group, not an image: its nodes are links, each named by what it stands for.
    const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": "Session tree" });
    const world = el("g", { transform: `translate(${MARGIN - left},${MARGIN})` });
    svg.append(world);

    const edges = el("g");
    const nodes = el("g");
    world.append(edges, nodes);
    for (const n of root.descendants()) {
      const d = n.data;
      if (n.parent) {
        const onPath = d.onPath && (n.parent.data.onPath || n.parent.data.kind === "start");
        edges.append(el("path", { d: link(n.parent, n), class: `map-edge${onPath ? " on-path" : ""}` }));
        if (d.folded) {
          // Beside the edge where it nears its node, past the point where sibling edges part.
          const count = el("text", { x: n.x + 5, y: n.y - LEVEL_GAP * 0.3, class: "map-count" }, `+${d.folded}`);
          edges.append(count);
        }
      }
      const node = el("a", {
        class: `map-node kind-${d.kind}${d.isPosition ? " is-position" : ""}`,
        transform: `translate(${n.x},${n.y})`,
        "data-key": String(d.key),
        "data-ref": d.ref,
        "data-entry": d.kind === "fork" || d.kind === "start" ? "" : d.id,
        "aria-label": [ROLE[d.kind] || d.kind, d.label, d.isPosition ? "you are here" : "", d.text].filter(Boolean).join(" · "),
      });
      if (d.url) node.setAttribute("href", d.url);
      node.append(el("circle", { r: d.kind === "start" || d.kind === "fork" ? 8 : 6 }));
      if (caption(d)) {
        node.append(el("text", { x: 10, y: 4, class: d.label ? "map-label" : "" }, shorten(caption(d), CAPTION_CHARS)));
      }
      node.addEventListener("pointerenter", () => showTip(node, d));
      node.addEventListener("focus", () => showTip(node, d));
      node.addEventListener("pointerleave", hideTip);
      node.addEventListener("blur", hideTip);
      node.addEventListener("click", (ev) => {
        if (!pickBox.checked) return;
        ev.preventDefault();
        if (d.ref) togglePick(d.ref);
      });
      nodes.append(node);
      if (d.branchesUrl) {
        const compare = el("a", {
          href: d.branchesUrl,
          class: "map-branches",
          transform: `translate(${n.x - 12},${n.y + 4})`,
          "aria-label": `Compare the ${d.branches} branches that start here`,
        });
        compare.append(el("text", { "text-anchor": "end" }, "⇉"));
        compare.append(el("title", {}, `Compare the ${d.branches} branches that start here`));
        nodes.append(compare);
      }
    }
    frame.querySelector("svg")?.remove();
    frame.prepend(svg);
    return root;
  }

  function describe(data) {
    const drawn = `${data.shown.toLocaleString()} of ${data.entries.toLocaleString()} entries drawn`;
    const large = data.foldedMore ? "This session is large, so the map folds more: it shows " : "Shown: ";
    note.textContent = `${drawn}. ${large}${data.folding}. Straight runs are folded into their edges (+N entries).`;
    const hidden = document.getElementById("map-hidden-labels");
    const list = hidden.querySelector("ul");
    list.replaceChildren(
      ...data.hiddenLabels.map((item) => {
        const li = document.createElement("li");
        const a = document.createElement("a");
        a.textContent = item.label;
        if (item.url) a.href = item.url;
        li.append(a);
        return li;
      }),
    );
    hidden.hidden = data.hiddenLabels.length === 0;
  }

  function centre(root) {
    let target = null;
    root.each((n) => {
      if (n.data.isPosition) target = n;
    });
    const node = target && frame.querySelector(`.map-node[data-key="${target.data.key}"]`);
    if (!node) return;
    const box = node.getBoundingClientRect();
    const outer = frame.getBoundingClientRect();
    frame.scrollLeft += box.left - outer.left - frame.clientWidth / 2;
    frame.scrollTop += box.top - outer.top - frame.clientHeight / 2;
  }

  async function load(first) {
    try {
      const response = await fetch(frame.dataset.src, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!response.ok) throw new Error(`the server answered ${response.status}`);
      const data = await response.json();
      compareUrl = data.compareUrl;
      const refs = new Set(data.nodes.map((d) => d.ref));
      picked = picked.filter((ref) => refs.has(ref));
      const root = draw(data);
      describe(data);
      updatePicks();
      if (first) centre(root);
      frame.dataset.loaded = "true";
    } catch (error) {
      note.textContent = `The map could not be loaded: ${error.message}`;
    }
  }

  // The follow socket says when the file grew ("pitree:grew", live.js): draw the map again, keeping
  // the picks and the scroll.
  document.addEventListener("pitree:grew", () => load(false));
  load(true);
})();
