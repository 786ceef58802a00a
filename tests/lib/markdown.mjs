// What the documentation test reads out of the Markdown files: fenced code
// blocks (with the marker comment before each), relative links and the
// anchors GitHub gives headings. No Markdown library: the docs use a small,
// regular subset (ATX headings, ``` fences at the start of a line, inline links).

/**
 * The fenced blocks of a Markdown text:
 * [{ lang, line (1-based, of the first code line), code, marker }], where
 * `marker` is the text of a `<!-- docs-test: ... -->` comment on the
 * non-blank line just before the fence (or null).
 */
export function codeBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    if (end >= lines.length) throw new Error(`line ${i + 1}: a code fence is never closed`);
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const marker = before >= 0 ? /^<!--\s*docs-test:\s*(.*?)\s*-->$/.exec(lines[before].trim()) : null;
    blocks.push({ lang: open[1], line: i + 2, code: lines.slice(i + 1, end).join('\n'), marker: marker ? marker[1] : null });
    i = end;
  }
  return blocks;
}

/** The text outside fenced blocks and inline code spans, where links and headings live. */
function prose(text) {
  const lines = text.split('\n');
  let inside = false;
  return lines.map((line) => {
    if (/^```/.test(line)) {
      inside = !inside;
      return '';
    }
    return inside ? '' : line;
  });
}

/**
 * GitHub's anchor for a heading: lower case, inline markup and punctuation
 * dropped (letters, digits, '_', '-' and spaces kept), spaces as '-', and
 * '-1', '-2' ... after repeats.
 */
export function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const line of prose(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const plain = h[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = plain.toLowerCase().replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const line of prose(text)) {
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]);
  }
  return out;
}

/** Every link target outside code: [{ target, line }] (inline links and images). */
export function links(text) {
  const out = [];
  prose(text).forEach((line, i) => {
    const bare = line.replace(/`[^`]*`/g, '');
    for (const m of bare.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1], line: i + 1 });
  });
  return out;
}
