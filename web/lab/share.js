// The Share button: copies the page's link and says what it carries. The
// link holds the settings and the seed, not the trained weights, so whoever
// opens it starts again from those settings; a trained model travels as a file.

/** What the link carries, said whenever it is shared. */
export const LINK_CARRIES = 'it carries the settings and the seed, not the trained weights: whoever opens it starts from those settings '
  + '(the pretrained model, or a new one to train). To share the trained model, use Save model and send the file.';

/** Copies `href` and tells the learner (notice) what the link carries. */
export async function shareLink(href, notice) {
  try {
    await navigator.clipboard.writeText(href);
    notice.show(`Link copied: ${LINK_CARRIES}`);
  } catch {
    notice.show(`Copy the address bar's link: ${LINK_CARRIES}`);
  }
}
