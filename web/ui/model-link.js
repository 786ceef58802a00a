// The model cards' facts and their link, with no DOM: which checkpoints the
// cards offer, Pythia's training checkpoints (its revisions step0 … step143000),
// and the three query fields that say which card a link chose and where models
// come from: ?repo=owner/name&revision=stepN&hub=./models. A field that is not
// understood falls back (no card chosen, 'main', the default hub) with a reason
// for the page's notice, and nothing is fetched by reading a link.
//   readModelLink(search, { baseURI, origin, policy })  -> { repo, revision, hub, hubLabel, problems: [text] }
//   readHub(value, { baseURI, origin, policy })        -> { hub, label } | { error }
//   modelLink(search, { repo, revision, hub })          -> the query string with those fields set ('' fields removed)

import { GPT2_SOURCE, PYTHIA_SOURCE } from './gpt2-file.js';

const pythiaSize = (name) => PYTHIA_SOURCE.models.find((m) => m.name === name).size;

/** The hub the cards open from unless the link or the setting names another. */
export const HUB = 'https://huggingface.co';

/**
 * Pythia's saved training checkpoints, each a revision of the repo: step0, the
 * powers of two to 512, then every 1,000 steps to the last, 143,000 (EleutherAI's
 * model card). 'main' is the last step.
 */
export const PYTHIA_STEPS = Object.freeze([0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
  ...Array.from({ length: 143 }, (_, k) => (k + 1) * 1000)]);
const PYTHIA_REVISIONS = Object.freeze(['main', ...PYTHIA_STEPS.map((s) => `step${s}`)]);

/**
 * The cards, in the row's order: the repo, a short name, what it is, its revisions (Pythia: every
 * training checkpoint) and `listed`, the weights' size the hub reported for 'main' when this list
 * was written: what a card says until the hub is asked (modelSize), which it is once the reader
 * points at the cards.
 */
export const MODEL_CARDS = Object.freeze([
  { repo: 'openai-community/gpt2', name: 'GPT-2 small', what: '124M parameters, 12 layers × 12 heads', revisions: ['main'], listed: GPT2_SOURCE.weights.size },
  { repo: 'distilbert/distilgpt2', name: 'DistilGPT2', what: '82M parameters, 6 layers × 12 heads', revisions: ['main'], listed: '353 MB' },
  { repo: 'openai-community/gpt2-medium', name: 'GPT-2 medium', what: '355M parameters, 24 layers × 16 heads', revisions: ['main'], listed: '1.52 GB' },
  { repo: 'EleutherAI/pythia-70m', name: 'Pythia-70M', what: '70M parameters, 6 layers × 8 heads; every training step saved', revisions: PYTHIA_REVISIONS, listed: pythiaSize('pythia-70m') },
  { repo: 'EleutherAI/pythia-160m', name: 'Pythia-160M', what: '160M parameters, 12 layers × 12 heads; every training step saved', revisions: PYTHIA_REVISIONS, listed: pythiaSize('pythia-160m') },
].map(Object.freeze));

export const cardOf = (repo) => MODEL_CARDS.find((c) => c.repo === repo) ?? null;

/** A revision in words: 'main' is the released model; stepN, its training checkpoint. */
export const revisionText = (revision) => (revision === 'main' ? 'main (the released model)' : `step ${Number(revision.slice(4)).toLocaleString('en')}`);

/** The origins a page's Content-Security-Policy lets it connect to, besides its own: connect-src's exact origins (default-src's when it has none). */
export function allowedOrigins(policy) {
  if (typeof policy !== 'string') return null;
  const directives = Object.fromEntries(policy.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name.toLowerCase(), values]));
  const sources = directives['connect-src'] ?? directives['default-src'] ?? null;
  if (!sources) return null;
  return sources.filter((s) => /^https?:\/\/[^*/]+$/i.test(s)).map((s) => new URL(s).origin);
}

/**
 * A hub setting: empty for the default; a path on this site ('./models'), or an
 * http(s) URL of this origin or of an origin the page's policy connects to
 * (huggingface.co). Every other scheme (javascript:, data:, file:, …), a user,
 * query or fragment, and another origin are refused with a reason.
 */
export function readHub(value, { baseURI, origin, policy = null }) {
  if (value === null || value === undefined || value.trim() === '') return { hub: HUB, label: 'huggingface.co' };
  const text = value.trim();
  if (text.length > 512) return { error: 'is longer than 512 characters' };
  let url;
  try {
    url = new URL(text, baseURI);
  } catch {
    return { error: 'is not a URL or a path' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: `uses ${url.protocol.replace(/:$/, '')}:, and a hub is reached by http or https only` };
  if (url.username || url.password || url.search || url.hash) return { error: 'has a user, a query or a fragment, which a hub\'s base URL has not' };
  const allowed = allowedOrigins(policy) ?? [new URL(HUB).origin];
  if (url.origin !== origin && !allowed.includes(url.origin)) {
    return { error: `is on ${url.origin}, which this page's policy does not let it reach (its own site and ${allowed.map((o) => new URL(o).host).join(', ')} only)` };
  }
  const hub = url.href.replace(/\/+$/, '');
  return { hub, label: url.origin === origin ? `this site (${url.pathname.replace(/\/+$/, '') || '/'})` : url.host };
}

/** The link's model fields, each checked; problems name what fell back and why. */
export function readModelLink(search, where) {
  const q = new URLSearchParams(search);
  const problems = [];
  const hubRead = readHub(q.get('hub'), where);
  let hub = hubRead.hub, hubLabel = hubRead.label;
  if (hubRead.error) {
    problems.push(`The link's hub ${JSON.stringify(q.get('hub').slice(0, 80))} ${hubRead.error}: models come from huggingface.co.`);
    ({ hub, label: hubLabel } = readHub(null, where));
  }
  let repo = q.get('repo');
  let revision = q.get('revision') ?? 'main';
  const card = repo === null ? null : cardOf(repo);
  if (repo !== null && !card) {
    problems.push(`The link's model ${JSON.stringify(repo.slice(0, 80))} is not one of the cards (${MODEL_CARDS.map((c) => c.repo).join(', ')}): none is chosen.`);
    repo = null;
  }
  if (card && !card.revisions.includes(revision)) {
    problems.push(`The link's revision ${JSON.stringify(revision.slice(0, 40))} is not one of ${card.name}'s (${card.revisions.length > 1 ? 'main or a training step, step0 to step143000' : 'main'}): main is chosen.`);
    revision = 'main';
  }
  if (!card) revision = 'main';
  return { repo, revision, hub, hubLabel, hubSetting: hubRead.error ? '' : (q.get('hub') ?? '').trim(), problems };
}

/** search with the model fields set: repo and revision ('main' and null are left out), hub ('' left out). */
export function modelLink(search, { repo, revision, hub }) {
  const q = new URLSearchParams(search);
  const set = (name, value, none) => (value === undefined ? null : value === null || value === none ? q.delete(name) : q.set(name, value));
  set('repo', repo, null);
  set('revision', revision, 'main');
  set('hub', hub, '');
  const text = q.toString().replace(/%2F/gi, '/');
  return text ? `?${text}` : '';
}
