// A canvas to draw digits on, with mouse, pen or touch (pointer events), read
// back as the engine's image input: { rows, cols, data } greys in [0, 1], white
// ink on black like MNIST. Strokes are drawn at `scale` times the image's
// resolution and averaged down, so edges are grey as in the real digits. A
// Clear button comes with it (the keyboard's way to start again); a page adds
// its own buttons to `toolbar` (e.g. "random example", which calls setImage).
// The keyboard draws too: the canvas is a Tab stop, the arrow keys move a pen
// (shown as a ring; Shift moves 4 pixels), Space or Enter puts it down or lifts
// it (down, every move leaves ink), Escape lifts it; the label says so.
//
//   const d = createDrawing({ id, label, rows = 28, cols = 28, scale = 8, brush = 2, size = 224, onChange })
//     id        hooks: data-testid="drawing-<id>" (canvas), "drawing-clear-<id>"
//     label     accessible name of the canvas (say what to draw)
//     rows/cols the image the engine gets;  brush: the pen's diameter in image pixels
//     size      displayed width in CSS px of the longer side (shrinks with its container)
//     onChange(d)  after every stroke segment (throttled to one per animation frame), clear and setImage
//   d.image({ height, center }) -> { rows, cols, data }
//     height    scale the ink so its bounding box is `height` pixels tall (MNIST digits are
//               about 20 of 28), as wide as fits, about the ink's own centre;  omitted: as drawn
//     center    move the ink's centre of mass to the image's centre (MNIST's own normalisation)
//   d.setImage(image)   shows an image (greys in [0, 1], any size: stretched to the canvas)
//   d.clear();  d.resize(rows, cols);  d.empty (true when nothing is drawn)
//   d.el (the container), d.canvas, d.toolbar
import { h } from './dom.js';

/** Average of the hi-res ink (0..1) over a rectangle, sampled on a k x k grid. */
function sampleBox(ink, W, H, x0, y0, x1, y1, k = 4) {
  let sum = 0;
  for (let a = 0; a < k; a++) {
    const y = Math.floor(y0 + ((a + 0.5) / k) * (y1 - y0));
    if (y < 0 || y >= H) continue;
    for (let b = 0; b < k; b++) {
      const x = Math.floor(x0 + ((b + 0.5) / k) * (x1 - x0));
      if (x >= 0 && x < W) sum += ink[y * W + x];
    }
  }
  return sum / (k * k);
}

export function createDrawing({ id, label, rows = 28, cols = 28, scale = 8, brush = 2, size = 224, onChange = () => {} }) {
  const canvas = h('canvas', {
    dataset: { testid: `drawing-${id}` },
    style: { display: 'block', width: '100%', height: 'auto', background: '#000', touchAction: 'none', cursor: 'crosshair', borderRadius: '4px' },
    attrs: {
      role: 'application', tabindex: 0, 'aria-roledescription': 'drawing canvas',
      'aria-label': `${label}. With the keyboard: arrow keys move the pen (Shift: faster), Space or Enter puts it down or lifts it`,
    },
  });
  const pen = h('div', {
    hidden: true, dataset: { testid: `drawing-pen-${id}` },
    style: { position: 'absolute', borderRadius: '50%', border: '2px solid #ff4d4d', pointerEvents: 'none', boxSizing: 'border-box', transform: 'translate(-50%, -50%)' },
  });
  const penStatus = h('p', { className: 'sr-only', dataset: { testid: `drawing-status-${id}` }, attrs: { 'aria-live': 'polite' } });
  const clearButton = h('button', { type: 'button', textContent: 'Clear', dataset: { testid: `drawing-clear-${id}` }, title: 'Erase the drawing' });
  const toolbar = h('div', { className: 'buttons', attrs: { role: 'toolbar', 'aria-label': `${label}: tools` } }, clearButton);
  const frame = h('div', { style: { maxWidth: '100%', position: 'relative' } }, canvas, pen);
  const el = h('div', { className: 'drawing' }, frame, toolbar, penStatus);
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  let drawn = false;
  let last = null;
  let pending = 0;

  function resize(r, c) {
    rows = r;
    cols = c;
    canvas.width = cols * scale;
    canvas.height = rows * scale;
    frame.style.width = `${Math.round((size * cols) / Math.max(rows, cols))}px`;
    wipe();
  }

  function wipe() {
    ctx.fillStyle = '#000';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    drawn = false;
  }

  function changed() {
    if (pending) return;
    pending = requestAnimationFrame(() => {
      pending = 0;
      onChange(api);
    });
  }

  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    return { x: ((e.clientX - r.left) / r.width) * canvas.width, y: ((e.clientY - r.top) / r.height) * canvas.height };
  };

  function segment(p, q) {
    ctx.strokeStyle = '#fff';
    ctx.fillStyle = '#fff';
    ctx.lineWidth = brush * scale;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.beginPath();
    if (p.x === q.x && p.y === q.y) {
      ctx.arc(p.x, p.y, (brush * scale) / 2, 0, 2 * Math.PI);
      ctx.fill();
    } else {
      ctx.moveTo(p.x, p.y);
      ctx.lineTo(q.x, q.y);
      ctx.stroke();
    }
    drawn = true;
    changed();
  }

  canvas.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    canvas.setPointerCapture?.(e.pointerId);
    last = at(e);
    segment(last, last);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!last) return;
    const p = at(e);
    segment(last, p);
    last = p;
  });
  const up = () => { last = null; };
  canvas.addEventListener('pointerup', up);
  canvas.addEventListener('pointercancel', up);
  clearButton.addEventListener('click', () => api.clear());

  // the keyboard's pen: a position in image pixels, up or down
  const key = { row: 0, col: 0, down: false };
  const penAt = () => ({ x: (key.col + 0.5) * scale, y: (key.row + 0.5) * scale });
  function showPen() {
    const d = Math.max(brush, 1.5);
    Object.assign(pen.style, {
      left: `${(100 * (key.col + 0.5)) / cols}%`, top: `${(100 * (key.row + 0.5)) / rows}%`,
      width: `${(100 * d) / cols}%`, height: `${(100 * d) / rows}%`, background: key.down ? 'rgb(255 77 77 / 35%)' : 'transparent',
    });
    pen.hidden = false;
  }
  const say = () => { penStatus.textContent = `pen ${key.down ? 'down' : 'up'} at row ${key.row + 1}, column ${key.col + 1} of ${rows}×${cols}`; };
  canvas.addEventListener('focus', () => {
    if (key.row >= rows || key.col >= cols || (!key.row && !key.col)) Object.assign(key, { row: Math.floor(rows / 2), col: Math.floor(cols / 2) });
    showPen();
    say();
  });
  canvas.addEventListener('blur', () => {
    key.down = false;
    pen.hidden = true;
  });
  canvas.addEventListener('keydown', (e) => {
    const k = e.shiftKey ? 4 : 1;
    const moves = { ArrowUp: [-k, 0], ArrowDown: [k, 0], ArrowLeft: [0, -k], ArrowRight: [0, k] };
    if (moves[e.key]) {
      const from = penAt();
      key.row = Math.max(0, Math.min(rows - 1, key.row + moves[e.key][0]));
      key.col = Math.max(0, Math.min(cols - 1, key.col + moves[e.key][1]));
      if (key.down) segment(from, penAt());
    } else if (e.key === ' ' || e.key === 'Enter') {
      key.down = !key.down;
      if (key.down) segment(penAt(), penAt());
    } else if (e.key === 'Escape') {
      key.down = false;
    } else return;
    e.preventDefault();
    e.stopPropagation(); // Space here draws: it must not reach a page's own shortcut for it
    showPen();
    say();
  });

  const api = {
    el,
    canvas,
    toolbar,
    get empty() { return !drawn; },
    get rows() { return rows; },
    get cols() { return cols; },
    resize(r, c) {
      resize(r, c);
      changed();
    },
    clear() {
      wipe();
      changed();
    },
    setImage(image) {
      const small = h('canvas', { width: image.cols, height: image.rows });
      const sctx = small.getContext('2d');
      const img = sctx.createImageData(image.cols, image.rows);
      for (let p = 0; p < image.rows * image.cols; p++) {
        const g = 255 * Math.min(Math.max(image.data[p], 0), 1);
        img.data.set([g, g, g, 255], 4 * p);
      }
      sctx.putImageData(img, 0, 0);
      wipe();
      ctx.imageSmoothingEnabled = true;
      ctx.drawImage(small, 0, 0, canvas.width, canvas.height);
      drawn = true;
      changed();
    },
    image({ height, center = false } = {}) {
      const W = canvas.width;
      const H = canvas.height;
      const px = ctx.getImageData(0, 0, W, H).data;
      const ink = new Float32Array(W * H);
      let x0 = W, y0 = H, x1 = -1, y1 = -1, mass = 0, mx = 0, my = 0;
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const v = px[4 * (y * W + x)] / 255;
          ink[y * W + x] = v;
          if (v > 0.1) {
            if (x < x0) x0 = x;
            if (x > x1) x1 = x;
            if (y < y0) y0 = y;
            if (y > y1) y1 = y;
          }
          mass += v;
          mx += v * (x + 0.5);
          my += v * (y + 0.5);
        }
      }
      const data = new Float32Array(rows * cols);
      if (x1 < 0) return { rows, cols, data };
      // the map from image pixels (u, v) to hi-res pixels: X = cx + (u - tu) * k
      let k = scale; // hi-res pixels per image pixel
      let cx = (x0 + x1 + 1) / 2;
      let cy = (y0 + y1 + 1) / 2;
      if (height) {
        const s = Math.min(height / ((y1 - y0 + 1) / scale), cols / ((x1 - x0 + 1) / scale), rows / ((y1 - y0 + 1) / scale));
        k = scale / s;
      }
      let tu = cx / scale;
      let tv = cy / scale;
      if (center) {
        cx = mx / mass;
        cy = my / mass;
        tu = cols / 2;
        tv = rows / 2;
      }
      for (let v = 0; v < rows; v++) {
        for (let u = 0; u < cols; u++) {
          const X0 = cx + (u - tu) * k;
          const Y0 = cy + (v - tv) * k;
          data[v * cols + u] = Math.min(1, sampleBox(ink, W, H, X0, Y0, X0 + k, Y0 + k));
        }
      }
      return { rows, cols, data };
    },
  };
  resize(rows, cols);
  return api;
}
