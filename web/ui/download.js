// Files made in the page: start a download, and CSV that is safe to open in a spreadsheet.
//   download(name, blob)     saves `blob` as `name` (an <a download> click; the object URL is revoked after)
//   csvField(value)          one CSV field: quoted when needed, and neutralised when it begins with
//                            = + - @ tab or CR (OWASP CSV injection: a leading ' makes a spreadsheet
//                            show it as text instead of running it as a formula). Numbers (trusted, made by
//                            the page) pass as they are; ±Infinity as inf / -inf.
//   csvLine(fields)          fields -> one line, joined by commas

export function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(value) {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : value > 0 ? 'inf' : value < 0 ? '-inf' : 'nan';
  let t = String(value ?? '');
  if (FORMULA_START.test(t)) t = `'${t}`;
  return /[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

export const csvLine = (fields) => fields.map(csvField).join(',');
