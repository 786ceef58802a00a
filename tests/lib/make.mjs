// `make -s TARGET` for the tests that build native programs (tests/js/native-match,
// vision, docs): one make at a time per checkout (flock on build/.make.lock, where
// flock exists), since the programs link build/libattnlab.a and two makes building
// it at once in a fresh checkout would write the same objects.
import { mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const hasFlock = spawnSync('flock', ['--version']).status === 0;

/** The command and arguments that make `target` in ROOT, serialised with any other such make. */
export function makeCommand(target) {
  if (!hasFlock) return ['make', ['-s', target]];
  mkdirSync(`${ROOT}build`, { recursive: true });
  return ['flock', [`${ROOT}build/.make.lock`, 'make', '-s', target]];
}
