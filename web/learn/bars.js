// A small bar chart of signed values in [-1, 1], one labelled bar per item (chapter 7:
// Kendall's r_K per output character), as SVG in the page's own units so its labels stay
// readable on a phone: bars up from the zero line for positive values, down for negative,
// the item under each bar and its value in the bar's title. The figure's accessible
// name lists every item and value, for a screen reader.
//   const bars = createBars(figure, { label });  bars.update([{ label, value }])
import { svg } from '../ui/dom.js';
import { fixed } from '../ui/format.js';

const H = 120;
const PAD = { top: 8, bottom: 22, left: 30 };
const BAR = 22;

export function createBars(figure, { label }) {
  const chart = svg('svg', { role: 'img', class: 'rk-bars', 'data-testid': 'ch7-text-bars' });
  figure.append(chart);
  const y = (v) => PAD.top + ((1 - v) / 2) * (H - PAD.top - PAD.bottom);
  return {
    update(items) {
      const width = PAD.left + items.length * BAR + 4;
      chart.setAttribute('viewBox', `0 0 ${width} ${H}`);
      chart.setAttribute('width', String(width));
      chart.setAttribute('aria-label', `${label}: ${items.map((it) => `${it.label} ${fixed(it.value, 2)}`).join(', ')}`);
      const axis = [1, 0, -1].map((v) => [
        svg('line', { x1: PAD.left - 3, x2: width, y1: y(v), y2: y(v), class: v === 0 ? 'zero' : 'grid' }),
        svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }),
      ]).flat();
      [1, 0, -1].forEach((v, k) => { axis[2 * k + 1].textContent = v === -1 ? '−1' : String(v); });
      const bars = items.map((it, k) => {
        const x = PAD.left + k * BAR + 3;
        const v = Math.max(-1, Math.min(1, it.value));
        const rect = svg('rect', { x, width: BAR - 6, y: Math.min(y(v), y(0)), height: Math.max(1, Math.abs(y(v) - y(0))), class: v < 0 ? 'neg' : 'pos' });
        const title = svg('title');
        title.textContent = `${it.label}: ${fixed(it.value, 2)}`;
        rect.append(title);
        const text = svg('text', { x: x + (BAR - 6) / 2, y: H - 6, 'text-anchor': 'middle', class: 'item' });
        text.textContent = it.label;
        return [rect, text];
      }).flat();
      chart.replaceChildren(...axis, ...bars);
    },
  };
}
