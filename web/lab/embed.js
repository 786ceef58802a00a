// The lab embedded (?embed&family=seq2seq|images|transformer): the training panel
// (run bar, model line, progress) and the family's maps, without the settings form
// or the experiments. A link of another family opens at the asked family's first task.
// &compact shows the run bar, the family's first map (the transformer's heads) and the
// progress charts only, without their longer explanations, two columns where there is
// room: a frame of at most 1,200 px, on a laptop and on a phone (docs/embedding.md).
import { LAB_FAMILIES } from '../embed/protocol.js';
import { byId } from '../ui/dom.js';
import { startEmbed } from '../ui/embed.js';
import { FAMILIES, familyOf } from './families.js';
import { codec } from './state.js';

/** The lab's family names (text, images, transformer) as the embed links name them. */
const NAMES = { text: 'seq2seq', images: 'images', transformer: 'transformer' };
const familyNamed = (name) => FAMILIES.find((f) => NAMES[f.name] === name);

/** The embed name of the family a state belongs to ('seq2seq' for the text family). */
export const embedFamily = (state) => NAMES[familyOf(state).name];

/** Before the page reads its link: a link whose task is of another family gets the asked family's first task. */
export function adoptFamily(params) {
  const family = familyNamed(params.family ?? LAB_FAMILIES[0]);
  if (familyOf(codec.decode(location.hash).state) === family) return;
  const hash = location.hash.length > 1 ? `${location.hash}&` : '#';
  history.replaceState(null, '', `${hash}task=${family.tasks[0]}`);
}

/** Shows the training panel and the family's maps; returns the embed messages (ui/embed.js). */
export function startLabEmbed(params) {
  const family = familyNamed(params.family ?? LAB_FAMILIES[0]);
  const maps = [...document.querySelectorAll('main > section[data-for]')]
    .filter((s) => s.dataset.for.split(' ').includes(family.name) && !['modes', 'bottleneck'].includes(s.id));
  const progress = byId('h-progress').closest('section');
  // a lab-only parameter, read here: the embed protocol's are every page's
  const compact = new URLSearchParams(location.search.slice(0, 2048)).has('compact');
  document.documentElement.classList.toggle('compact', compact);
  const targets = [byId('runbar'), document.querySelector('.model-line'), progress, ...(compact ? maps.slice(0, 1) : maps)];
  return startEmbed(params, { widget: `lab/${NAMES[family.name]}`, targets });
}
