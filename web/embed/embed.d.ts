// Types of attnlab/embed (web/embed/embed.js); the protocol: docs/embedding.md.

/** A widget's name: the whole playground or one of its views, a lab family, or a Learn chapter's widget. */
export type WidgetName =
  | 'playground'
  | `playground/${'scores' | 'weights' | 'context' | 'self-attention' | 'positions'}`
  | `lab/${'seq2seq' | 'images' | 'transformer'}`
  | `learn/${number}/${string}`;

/** Sent once the widget has painted. */
export interface ReadyMessage { type: 'attnlab:ready'; widget: string; version: string }
/** Sent on every change of the widget's rendered height (CSS pixels). */
export interface ResizeMessage { type: 'attnlab:resize'; height: number }
/** Canvas's form of the resize message, sent as well when the widget was given &lti. */
export interface LtiResizeMessage { subject: 'lti.frameResize'; height: number }
/** Sent when the learner changes the state: a link that reproduces it (the lab's with the hub model it opened: ?repo=&revision=&hub=). */
export interface StateMessage { type: 'attnlab:state'; link: string }
/** Sent when the learner answers a Learn challenge. */
export interface ChallengeMessage { type: 'attnlab:challenge'; chapter: number; widget: string; solved: boolean; attempts: number }
export type WidgetMessage = ReadyMessage | ResizeMessage | LtiResizeMessage | StateMessage | ChallengeMessage;
/** Sent to the widget: load a state link (a URL sets the lab's hub model fields too; a "#…" leaves them). */
export interface SetMessage { type: 'attnlab:set'; link: string }

export interface EmbedOptions {
  /** Which widget. */
  widget: WidgetName;
  /** Where attnlab is hosted: the folder of its index.html (absolute, or relative to this page). */
  base: string;
  /** A state link (a URL or "#…") the Share or Embed button or an attnlab:state message made; default: the widget's defaults. */
  state?: string;
  /** This page's origin: the widget then talks to this origin only. */
  origin?: string | null;
  /** Also send Canvas's lti.frameResize messages. */
  lti?: boolean;
  /** The iframe's title (what a screen reader announces). */
  title?: string;
  /** Every valid message from the widget. */
  onMessage?: ((message: WidgetMessage) => void) | null;
}

export interface EmbeddedWidget {
  /** The iframe showing the widget. */
  readonly iframe: HTMLIFrameElement;
  /** Loads a state link in the widget. */
  set(link: string): void;
  /** Removes the iframe and stops listening for its messages. */
  destroy(): void;
}

/** Puts the widget in `element` (an iframe of a hosted attnlab, sized by the widget's resize messages). */
export function embed(element: Element, options: EmbedOptions): EmbeddedWidget;
/** The URL of the page that shows `widget` alone. */
export function widgetUrl(widget: WidgetName, options: { base: string; state?: string; origin?: string | null; lti?: boolean }): string;
/** The protocol's version. */
export const VERSION: string;
