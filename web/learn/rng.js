// Seeded draws for the page's examples, on the shared PRNG (ui/rng.js): the same
// seed gives the same numbers on every visit, and links write them out in full.
import { mulberry32, randomMatrix } from '../ui/rng.js';

export { mulberry32, randomMatrix };

/** A standard normal draw (Box–Muller) from a uniform source. */
export function normal(rand) {
  const u = 1 - rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}
