// The seeded PRNG and random matrices now live in web/ui/rng.js (shared by every page).
export * from '../ui/rng.js';
