// Interleaved timing for the benches. Each subject ({ name, call }, call may
// return a promise) is warmed up (>= warmCalls calls and >= warmMs, so V8 has
// tiered its code up), then sampled in `rounds` rounds that run the subjects in
// rotating order, so drift on a shared machine hits them alike. A sample
// batches enough calls to last >= sampleMs. Returns, per subject, ms per call:
// the median of its samples and the best (fastest) sample, and the best by this
// process's CPU time (cpu: a call the machine's other work pauses costs no CPU
// time; a subject on several threads adds their times).

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function timeInterleaved(subjects, { rounds, sampleMs, warmMs, warmCalls, consume }) {
  const now = () => performance.now();
  const state = subjects.map(() => ({ batch: 1, samples: [], cpu: [] }));
  for (const [i, s] of subjects.entries()) {
    const times = [];
    for (const t0 = now(); times.length < warmCalls || now() - t0 < warmMs;) {
      const t = now();
      consume(await s.call());
      times.push(now() - t);
    }
    state[i].batch = Math.max(1, Math.ceil(sampleMs / Math.max(median(times.slice(times.length >> 1)), 1e-3)));
  }
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length, { batch, samples } = state[i];
      const t0 = now(), c0 = process.cpuUsage();
      for (let c = 0; c < batch; c++) consume(await subjects[i].call());
      samples.push((now() - t0) / batch);
      const cpu = process.cpuUsage(c0);
      state[i].cpu.push((cpu.user + cpu.system) / 1000 / batch);
    }
  }
  return subjects.map((s, i) => ({ name: s.name, ms: median(state[i].samples), best: Math.min(...state[i].samples), cpu: Math.min(...state[i].cpu) }));
}
