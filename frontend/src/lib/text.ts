// Untrusted text (logs, answers, test names) made safe to show: terminal escapes removed, links vetted.

// CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) and lone escapes
// eslint-disable-next-line no-control-regex -- matching terminal escapes is the point
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/** For react-markdown's urlTransform: keep web links and relative ones, drop javascript:, data: etc. */
export function safeUrl(url: string): string {
  // eslint-disable-next-line no-control-regex -- browsers ignore these inside a scheme
  const trimmed = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed);
  if (!scheme) return url;
  return SAFE_SCHEMES.has(scheme[0].toLowerCase()) ? url : "";
}

/** Lines of a log, with escapes gone; a huge log splits once, then renders virtualized. */
export function logLines(log: string): string[] {
  return stripAnsi(log).split(/\r?\n/);
}
