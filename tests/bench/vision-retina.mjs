// The retina run of the image bench (tests/bench/vision.mjs --only retina-cluttered): hard attention
// as in Mnih et al. 2014 on `cluttered`, trained with the bench's cosine schedule; reports the test
// accuracy, the accuracy with uniformly random glimpses, and the share of test images where one of
// the model's glimpses is centred inside the digit's box (examples() gives the boxes).
// With `mix: [from, to]` the run trains with train's softMix annealed as the grid's mix runs are: every
// image reads its glimpses at the policy's mean (learning where to look by the pathwise gradient) for
// the first `from` of the run, then the share falls linearly to 0 at `to`, then REINFORCE alone.
//   node tests/bench/vision-retina.mjs [--quick] [--size 100 --clutter 8] [--steps N] [--lr L] [--sigma S] [--hidden H]
//     [--retina SIZE,SCALES] [--glimpses T] [--mix FROM,TO]
import os from 'node:os';

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const cpuSeconds = (since) => {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1e6;
};

/** The retina's settings the bench measures (hidden 64, 6 glimpses of 3 scales). */
export const RETINA = { mode: 'hard', sensor: 'retina', hidden: 64, steps: 6, cell: 'gru' };

/** Share of `count` test examples where some glimpse's centre lies inside the digit's box. */
export function glimpsesOnDigit(m, count, seed = 1) {
  let hits = 0;
  // examples() gives at most 1,000 a call: one seed per thousand
  for (let done = 0, s = seed; done < count; done += 1000, s++) {
    for (const { image, boxes: [box] } of m.examples({ split: 'test', count: Math.min(1000, count - done), seed: s })) {
      const on = m.predict(image).steps.some(({ location: { x, y } }) => (
        y >= box.top && y < box.top + box.height && x >= box.left && x < box.left + box.width));
      hits += on;
    }
  }
  return hits / count;
}

/**
 * Trains a retina model `steps` steps in rounds of `round` (the engine's cosine schedule from lr down
 * to finalLr at the run's last step, gradients clipped at 5), timing the train calls' CPU; returns the bench's row ({ name, metric, steps, cpu, wall, load, final, uniform })
 * with `onDigit` beside it.
 */
export async function retinaRun(engine, { name, task, steps, round, evalCount, final, lr, finalLr, batch, seed = 1, model = {}, mix = null }) {
  const m = await engine.createVisionModel({ ...RETINA, ...task, ...model, batch, seed });
  const schedule = { lr, schedule: 'cosine', decaySteps: steps, finalLr, clip: 5 };
  const mixAt = (step) => {
    const x = step / steps;
    return x < mix[0] ? 1 : x >= mix[1] ? 0 : (mix[1] - x) / (mix[1] - mix[0]);
  };
  // a mixed run sets its share every 100 steps
  const every = mix ? Math.min(100, round) : round;
  let cpu = 0;
  let wall = 0;
  for (let done = 0; done < steps;) {
    const end = Math.min(done + round, steps);
    const c0 = process.cpuUsage();
    for (; done < end; done += every) {
      const n = Math.min(every, end - done);
      const share = mix ? { softMix: mixAt(done + n / 2) } : {};
      wall += m.train({ steps: n, batch, ...schedule, ...share }).seconds;
    }
    cpu += cpuSeconds(c0);
    done = end;
    const e = m.evaluate({ split: 'test', count: evalCount });
    const mixed = mix ? `, soft mix ${fmt(mixAt(done), 2)}` : '';
    process.stderr.write(`  ${name}: ${done} steps${mixed}, ${fmt(cpu)} s CPU (${fmt(wall)} s wall, load ${fmt(os.loadavg()[0])}), test accuracy ${fmt(100 * e.accuracy)}%\n`);
  }
  const result = {
    name, metric: 'accuracy', steps, cpu, wall, load: os.loadavg()[0], config: m.config,
    final: m.evaluate({ split: 'test', count: final }),
    uniform: m.evaluate({ split: 'test', count: final, attention: 'uniform' }),
    onDigit: glimpsesOnDigit(m, final),
  };
  m.destroy();
  console.log(`   ${name}: ${result.config.retina.scales} scales of ${result.config.retina.size} x ${result.config.retina.size}, sigma ${fmt(result.config.sigma, 2)}, ${result.config.steps} glimpses, hidden ${result.config.hidden}: ${fmt(100 * result.onDigit)}% of ${final} test images have a glimpse centred on the digit's box`);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { loadEngine } = await import('../../web/engine/index.js');
  const args = process.argv.slice(2);
  const arg = (k, d) => (args.includes(k) ? Number(args[args.indexOf(k) + 1]) : d);
  const quick = args.includes('--quick');
  const engine = await loadEngine({ simd: true, threads: 1 });
  const task = { task: 'cluttered', size: arg('--size', 60), clutter: arg('--clutter', 4) };
  const pair = (k) => (args.includes(k) ? args[args.indexOf(k) + 1].split(',').map(Number) : null);
  const retina = pair('--retina');
  const r = await retinaRun(engine, {
    name: `cluttered ${task.size} x ${task.size}, ${task.clutter} pieces, hard (retina${pair('--mix') ? ', soft mix' : ''})`, task,
    steps: arg('--steps', quick ? 40 : 25000), round: arg('--round', quick ? 20 : 1000), evalCount: quick ? 100 : 500,
    final: arg('--final', quick ? 200 : 2000), lr: arg('--lr', 0.002), finalLr: 0.0001, batch: arg('--batch', 32),
    model: {
      sigma: arg('--sigma', 0.15), hidden: arg('--hidden', RETINA.hidden), steps: arg('--glimpses', RETINA.steps),
      ...(retina ? { retina: { size: retina[0], scales: retina[1] } } : {}),
    },
    mix: pair('--mix'),
  });
  console.log(`| ${r.name} | ${r.steps} | ${fmt(r.cpu)} s | ${fmt(r.wall)} s (${fmt(r.load)}) | ${fmt(100 * r.final.accuracy)}% | ${fmt(100 * r.uniform.accuracy)}% | ${fmt(100 * r.onDigit)}% |`);
}
