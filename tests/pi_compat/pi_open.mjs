// Open session files with pi's own published SessionManager and print what pi sees.
//
// Usage: node pi_open.mjs [--leaf-contexts] FILE [FILE...]
//        node pi_open.mjs --manifest < MANIFEST.json
//
// Env PITREE_PI_DIR: where scripts/install-pi put @earendil-works/pi-coding-agent@1.6.0
// (default ${XDG_CACHE_HOME:-$HOME/.cache}/pitree/pi-coding-agent-1.6.0).
//
// One JSON line per FILE on stdout, in argument order:
//   {file, sessionId, header, leafId, branchIds, entryCount, labels, name, context,
//    contextEntryIds, treeRoots, treeNodes, fileChanged, leafContexts?, error: null}
// or {file, error: "<message>"} when pi refuses the file.
//
// --manifest reads a JSON list from stdin, one object per file, so that a test can open many files
// with different questions in one node run: {file, leafContexts?, positions?, entries?, labelTexts?, listing?}.
//   positions: entries to move the leaf to, as pi's /tree navigation does (branch(id); null is
//     resetLeaf(); a number is an index into getEntries(), for v1 files whose ids pi draws at random).
//     The result gets `positions: [{position, leafId, branchIds, context, contextEntryIds} |
//     {position, error}]`, and `entryIds` (getEntries() ids, in order).
//   entries: the result gets `entries`, getEntries() as pi holds them after loading (and migrating).
//   labelTexts: the result gets `labelTexts`, each label as String() shows it (pi keeps any value).
//   listing: the result gets `listing`, pi's SessionInfo for the file as SessionManager.listAll lists
//     it (before the file is opened, which may repair it): {id, cwd, name, parentSessionPath,
//     created, modified, messageCount, firstMessage}, or null when pi leaves the file out.
//   listingFile: list this file instead of FILE (its bytes under FILE's name, with FILE's mtime): the
//     same session as pi's list would read it with other bytes (a test's way to set aside one
//     documented difference of pi's list).
//
// `name` is pi's getSessionName(), or null with `nameError` when it throws (a latest session_info
// whose name is no string: pi calls .trim() on it).
//
// Why a flat tree (treeRoots + treeNodes with child ids) instead of nested nodes: a long
// linear chat nests one level per entry, and both JSON.stringify (~10k levels) and
// Python's json module (~500 levels) fail on such depth. pi_node.py rebuilds the nested
// `tree` for callers. treeNodes lists every node once, in pre-order of pi's getTree().
//
// Each file is copied to a fresh temp dir and the copy is opened, because
// SessionManager.open writes to the file it opens (adds a missing final "\n", rewrites
// v1/v2 files on migration). `fileChanged` says whether pi modified the copy.
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const PI_PACKAGE = "@earendil-works/pi-coding-agent";
const PI_VERSION = "1.6.0";

// pi's code must never write to our stdout (the JSON lines protocol) or to the user's
// ~/.pi: send console output to stderr and point pi's agent dir at a throwaway folder.
console.log = console.info = console.debug = (...args) => console.error(...args);
const scratch = mkdtempSync(join(tmpdir(), "pitree-pi-open-"));
process.env.PI_CODING_AGENT_DIR = join(scratch, "agent");
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

function piDir() {
    if (process.env.PITREE_PI_DIR) return resolve(process.env.PITREE_PI_DIR);
    const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
    return join(cache, "pitree", `pi-coding-agent-${PI_VERSION}`);
}

async function loadSessionModule() {
    const pkgDir = join(piDir(), "node_modules", PI_PACKAGE);
    let version;
    try {
        version = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).version;
    } catch {
        throw new Error(`${PI_PACKAGE} is not installed in ${piDir()}: run scripts/install-pi`);
    }
    if (version !== PI_VERSION) {
        throw new Error(`${PI_PACKAGE} ${version} found in ${pkgDir}, expected ${PI_VERSION}: run scripts/install-pi`);
    }
    // The module that dist/index.js re-exports SessionManager and buildSessionContext from.
    // We load it directly: dist/index.js pulls in the whole CLI, which needs node >= 22
    // (fs.globSync) and is not needed to read sessions.
    return import(pathToFileURL(join(pkgDir, "dist", "core", "session-manager.js")).href);
}

/**
 * pi's getBranch(), buildSessionContext() and getTree() follow parent links without a
 * cycle guard and would spin forever on a file whose parentIds loop. Detect that first
 * and report it as an error for the file instead of hanging the test run.
 * Returns a message, or null when the parent links form no cycle.
 */
function findParentCycle(entries, byId, leafId) {
    // 1. The leaf's ancestor walk, over pi's byId (last entry per id wins, as in pi).
    const seen = new Set();
    for (let id = leafId; id != null; ) {
        if (seen.has(id)) return `parentId cycle on the leaf's path at entry ${JSON.stringify(id)}`;
        seen.add(id);
        const entry = byId.get(id);
        if (!entry) break;
        id = entry.parentId;
    }
    // 2. getTree() links every entry under the node of its parentId (a self-parent is a
    //    root there). A cycle in that graph means getTree never ends: Kahn's algorithm.
    const childIds = new Map();
    const indegree = new Map();
    for (const e of entries) indegree.set(e.id, 0);
    const edges = new Set();
    for (const e of entries) {
        if (e.parentId == null || e.parentId === e.id || !indegree.has(e.parentId)) continue;
        const key = JSON.stringify([e.parentId, e.id]);
        if (edges.has(key)) continue;
        edges.add(key);
        if (!childIds.has(e.parentId)) childIds.set(e.parentId, []);
        childIds.get(e.parentId).push(e.id);
        indegree.set(e.id, indegree.get(e.id) + 1);
    }
    const queue = [...indegree].filter(([, n]) => n === 0).map(([id]) => id);
    let done = 0;
    while (queue.length) {
        const id = queue.pop();
        done++;
        for (const c of childIds.get(id) ?? []) {
            indegree.set(c, indegree.get(c) - 1);
            if (indegree.get(c) === 0) queue.push(c);
        }
    }
    if (done < indegree.size) {
        const stuck = [...indegree].filter(([, n]) => n > 0).map(([id]) => id);
        return `parentId cycle among entries ${JSON.stringify(stuck.slice(0, 5))}: pi's walks do not guard against cycles`;
    }
    return null;
}

/** Flatten pi's getTree() iteratively: roots' ids plus one record per node, pre-order. */
function flattenTree(roots) {
    const treeNodes = [];
    const seen = new Set();
    const stack = [...roots].reverse();
    while (stack.length) {
        const node = stack.pop();
        if (seen.has(node)) continue; // a duplicated id makes pi share one node object
        seen.add(node);
        const record = { id: node.entry.id, type: node.entry.type };
        if (node.label !== undefined) record.label = node.label;
        record.children = node.children.map((c) => c.entry.id);
        treeNodes.push(record);
        for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
    }
    return { treeRoots: roots.map((n) => n.entry.id), treeNodes };
}

/** pi's session name; `nameError` instead when getSessionName() throws (it calls .trim() on the
 * latest session_info's name, whatever that name is). */
function sessionName(sm) {
    try {
        return { name: sm.getSessionName() ?? null };
    } catch (err) {
        return { name: null, nameError: err instanceof Error ? err.message : String(err) };
    }
}

/** What pi computes at its current leaf: the position's path, context and context entries. */
function contextAt(sm) {
    const context = sm.buildSessionContext();
    return {
        leafId: sm.getLeafId(),
        branchIds: sm.getBranch().map((e) => e.id),
        context: { thinkingLevel: context.thinkingLevel, model: context.model, messages: context.messages },
        contextEntryIds: sm.buildContextEntries().map((e) => e.id),
    };
}

/** Whether following parentId from `id` through pi's byId comes back to an entry already seen. */
function walkLoops(byId, id) {
    const seen = new Set();
    for (let current = byId.get(id); current; current = current.parentId ? byId.get(current.parentId) : undefined) {
        if (seen.has(current)) return true;
        seen.add(current);
    }
    return false;
}

/**
 * Move pi's leaf to each position, as its tree navigation does, and report what it computes there.
 * A position whose ancestor walk loops is reported as an error (pi's walks would not end).
 */
function positionResults(sm, entries, byId, positions) {
    return positions.map((position) => {
        try {
            if (position === null) {
                sm.resetLeaf();
            } else {
                const id = typeof position === "number" ? entries[position]?.id : position;
                if (walkLoops(byId, id)) throw new Error(`parentId cycle above ${JSON.stringify(id)}`);
                sm.branch(id);
            }
            return { position, ...contextAt(sm) };
        } catch (err) {
            return { position, error: err instanceof Error ? err.message : String(err) };
        }
    });
}

/** pi's SessionInfo for `file`, as its session list builds it; null when pi leaves the file out.
 * With `source`, the bytes listed are those of `source`, put in place of `file` in a folder of their own
 * (with `file`'s modification time, which pi may date the session by). */
async function listingOf(mod, file, source) {
    if (source) {
        const folder = mkdtempSync(join(scratch, "l-"));
        const stand = join(folder, basename(file));
        copyFileSync(source, stand);
        const stats = statSync(file);
        utimesSync(stand, stats.atime, stats.mtime);
        try {
            return await listingOf(mod, stand);
        } finally {
            rmSync(folder, { recursive: true, force: true });
        }
    }
    const infos = await mod.SessionManager.listAll(dirname(file));
    const info = infos.find((i) => i.path === file);
    if (!info) return null;
    return {
        id: info.id,
        cwd: info.cwd,
        name: info.name ?? null,
        parentSessionPath: info.parentSessionPath ?? null,
        created: Number.isNaN(info.created.getTime()) ? null : info.created.toISOString(),
        modified: Number.isNaN(info.modified.getTime()) ? null : info.modified.toISOString(),
        messageCount: info.messageCount,
        firstMessage: info.firstMessage,
    };
}

async function openOne(mod, file, options) {
    const dir = mkdtempSync(join(scratch, "f-"));
    try {
        // pi would treat a missing path as a new, empty in-memory session: report it instead.
        if (!existsSync(file)) throw new Error(`no such file: ${file}`);
        const copy = join(dir, basename(file));
        copyFileSync(file, copy);
        chmodSync(copy, 0o600); // a read-only source would make pi's repair write fail
        const stats = statSync(file);
        utimesSync(copy, stats.atime, stats.mtime); // a listing may date the session by the file's mtime
        const before = readFileSync(copy);
        const listing = options.listing ? await listingOf(mod, copy, options.listingFile) : undefined;

        const sm = mod.SessionManager.open(copy);
        const entries = sm.getEntries();
        const byId = new Map(entries.map((e) => [e.id, e]));
        const leafId = sm.getLeafId();
        const cycle = findParentCycle(entries, byId, leafId);
        if (cycle) throw new Error(cycle);

        // Labels: pi keeps a private map filled from every label entry; getLabel(id) reads
        // it. Ask for every id that could be in it (entry ids and label targets).
        const labels = {};
        const candidates = new Set(entries.map((e) => e.id));
        for (const e of entries) if (e.type === "label" && typeof e.targetId === "string") candidates.add(e.targetId);
        for (const id of candidates) {
            const label = sm.getLabel(id);
            if (label !== undefined) labels[id] = label;
        }

        const { branchIds, context, contextEntryIds } = contextAt(sm);
        const result = {
            file,
            sessionId: sm.getSessionId(),
            header: sm.getHeader(),
            leafId,
            branchIds,
            entryCount: entries.length,
            labels,
            ...sessionName(sm),
            context,
            contextEntryIds,
            ...flattenTree(sm.getTree()),
            fileChanged: !before.equals(readFileSync(copy)),
        };
        if (options.leafContexts) {
            // The context pi would build with the leaf moved to each tree leaf (an entry
            // without children), i.e. every branch of the file.
            const hasChild = new Set(entries.map((e) => e.parentId));
            result.leafContexts = {};
            for (const e of entries) {
                if (hasChild.has(e.id)) continue;
                const c = mod.buildSessionContext(entries, e.id, byId);
                result.leafContexts[e.id] = {
                    thinkingLevel: c.thinkingLevel,
                    model: c.model,
                    messages: c.messages,
                };
            }
        }
        if (options.positions) {
            result.entryIds = entries.map((e) => e.id);
            result.positions = positionResults(sm, entries, byId, options.positions);
        }
        if (options.entries) result.entries = entries;
        if (options.labelTexts) {
            result.labelTexts = Object.fromEntries(Object.entries(labels).map(([id, label]) => [id, String(label)]));
        }
        if (listing !== undefined) result.listing = listing;
        result.error = null;
        return result;
    } catch (err) {
        return { file, error: err instanceof Error ? err.message : String(err) };
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

/** The files to open and what to ask of each: from the command line, or a --manifest on stdin. */
function requests(args) {
    if (args.includes("--manifest")) return JSON.parse(readFileSync(0, "utf8"));
    const leafContexts = args.includes("--leaf-contexts");
    return args.filter((a) => a !== "--leaf-contexts").map((file) => ({ file, leafContexts }));
}

async function main() {
    const wanted = requests(process.argv.slice(2));
    if (wanted.length === 0) {
        process.stderr.write("usage: node pi_open.mjs [--leaf-contexts] FILE [FILE...] | --manifest < JSON\n");
        process.exitCode = 2;
        return;
    }
    const mod = await loadSessionModule();
    for (const request of wanted) {
        process.stdout.write(`${JSON.stringify(await openOne(mod, request.file, request))}\n`);
    }
}

main().catch((err) => {
    process.stderr.write(`pi_open: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
});
