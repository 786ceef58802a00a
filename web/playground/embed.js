// The playground embedded (?embed): &view= picks one figure (scores, weights, context,
// self-attention: every step of self-attention, positions: both in self-attention), none the
// whole playground.
// The link's state is shown; the learner's changes are sent as attnlab:state and
// attnlab:set loads a link (see ui/embed.js).
import { startEmbed } from '../ui/embed.js';
import { byId as $ } from '../ui/dom.js';
import { enterMode } from './state.js';

/** Each view's elements (the steps panel makes its cards on the first render). */
const VIEWS = {
  scores: () => [$('step-scores')],
  weights: () => [$('step-weights')],
  context: () => [$('step-context')],
  'self-attention': () => [$('steps')],
  positions: () => [$('step-positions')],
};

/** Starts embed mode once the first state is drawn; loadLink(hash) loads a link as the hashchange does. */
export function startPlaygroundEmbed(params, { store, loadLink }) {
  // positions and every step of self-attention belong to self-attention: a link in the other mode is switched
  if (['self-attention', 'positions'].includes(params.view) && store.state.mode !== 'self') store.update((s) => enterMode(s, 'self'), { source: 'embed', structural: true });
  // the positions figure with no positions shows only the shuffle: a link that does not choose one gets sinusoidal
  if (params.view === 'positions' && !/(^#|&)positions=/.test(location.hash)) store.update((s) => { s.positions = 'sinusoidal'; }, { source: 'embed', structural: true });
  const targets = params.view ? VIEWS[params.view]() : [$('main')];
  return startEmbed(params, { widget: params.view ? `playground/${params.view}` : 'playground', targets, onSet: loadLink });
}
