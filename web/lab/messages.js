// What went wrong, in a learner's words. The engine's messages are written for
// programmers (they name functions and options: "createSeq2Seq: attention:
// 'location' scores ..."); the page maps them, by code and by what the learner
// was doing, to what happened and what to do, and keeps the engine's own
// message under "Details" for whoever wants it.
//   explain(err, { doing, file }) -> { text, detail }
//     doing  'create' (a new model from the settings), 'load' (a model file), 'train',
//            'start' (the engine), 'experiment', 'read' (an input or an image), 'export' (a checkpoint)
//     kept   true: the model there was stays, with its settings (said at the end)

const RULES = [
  {
    when: (e) => /diverged/.test(e.message),
    say: () => 'Training blew up: the loss stopped being a number, so the model was put back to how it was just before. '
      + 'Try a smaller learning rate (0.005 works for every task here).',
  },
  {
    when: (e) => /'location'/.test(e.message),
    say: () => 'Location attention learns one weight per input position, so every input must have the same length: '
      + 'set Min length equal to Max length first, then choose location again.',
  },
  {
    when: (e) => /pairs: line (\d+)/.test(e.message),
    say: (e) => `Line ${e.message.match(/line (\d+)/)[1]} of your pairs is not “input, a Tab, output”. `
      + 'Fix that line (every line is an input, then a Tab, then what the model should answer).',
  },
  {
    when: (e) => /pairs: no lines/.test(e.message),
    say: () => 'There are no pairs to learn from yet: paste lines of “input, a Tab, output”.',
  },
  {
    when: (e) => /context: \d+; the '\w+' task needs at least \d+/.test(e.message),
    say: (e) => {
      const [, has, task, need] = e.message.match(/context: (\d+); the '(\w+)' task needs at least (\d+)/);
      return `Context is ${has} tokens, but the ${task} task needs at least ${need}: set Context to ${need} or more.`;
    },
  },
  {
    when: (e) => e.code === 'ERR_DATA',
    say: () => 'The handwritten digits (or a pretrained model) could not be downloaded. Check the connection, then try again.',
  },
  {
    when: (e, c) => c.doing === 'export',
    say: (e) => `This model cannot be written as a Hugging Face checkpoint: ${e.message.replace(/^(\w+: )+/, '').replace(/\.?$/, '.')}`,
  },
  {
    when: (e, c) => c.doing === 'load',
    say: (e, c) => `${c.file ?? 'That file'} is not a model this lab can open. Choose a file made with “Save model”.`,
  },
  {
    when: (e) => e.code === 'ERR_WORKER',
    say: () => 'The training worker stopped. Reload the page to start it again.',
  },
  {
    when: (e, c) => c.doing === 'start',
    say: () => 'The engine did not start in this browser (it needs WebAssembly and module workers). Try a current Chrome, Firefox or Safari.',
  },
];

/** What to tell the learner about `err`, and the engine's message as the detail. */
export function explain(err, context = {}) {
  const e = { message: String(err?.message ?? err), code: err?.code };
  const rule = RULES.find((r) => r.when(e, context));
  const detail = `${e.code ? `${e.code}: ` : ''}${e.message}`;
  const kept = context.kept ? ' The model you had is kept, with its settings.' : '';
  if (rule) return { text: rule.say(e, context) + kept, detail };
  // anything else: the engine's sentence without the function and option names it starts with
  const plain = e.message.replace(/^(\w+: )+/, '');
  return { text: `That did not work: ${plain.charAt(0).toLowerCase()}${plain.slice(1)}.`.replace(/\.\.$/, '.') + kept, detail };
}
