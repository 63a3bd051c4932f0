'use strict';
// dom.js: building the page. Everything that comes from the API (a user's
// subjects, names, texts) goes in as text nodes: h() turns every child that
// is not a Node into text, and no code here or elsewhere in the app assigns
// HTML. The page's CSP requires Trusted Types, so a string written as HTML
// would be refused by the browser.
//
// Every string child is also isolated and loses its explicit directional
// controls (docs/security.md, "The web app"): a title "\u202Egnp.exe"
// must not read as "exe.png", nor a name starting with Arabic or Hebrew
// turn the sentence around it right to left. Doing it here, for every
// string, means no page can forget it; a string that mixes the app's words
// with a user's is passed as separate children so that each is isolated.

// h creates an element. props: class, text, on<event> (listeners), value,
// checked (properties), anything else as an attribute (true: present,
// false/null: absent). Children: Nodes, strings (as text), arrays, nulls.
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') append(el, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'checked') el.checked = el.defaultChecked = !!v;
    else if (k === 'value') {
      // The default too, so that form.reset() comes back to it rather
      // than to empty (or, for a box ticked by default, to unticked).
      if ('defaultValue' in el && el.tagName !== 'SELECT') el.defaultValue = String(v);
      el.value = v;
    }
    else el.setAttribute(k, v === true ? '' : plain(v));
  }
  append(el, children);
  return el;
}

// bidiControls are the directional formatting characters: the embeddings
// and overrides (U+202A–U+202E), the isolates (U+2066–U+2069), and the
// marks (U+200E, U+200F, U+061C), which as a text's first strong
// character would set the direction of its <bdi> ("\u200Fpng.\u200Fexe"
// would read as "exe.png").
const bidiControls = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

// plain is s as a string without explicit directional controls, for the
// places that take text only (an attribute, an option, the window title).
function plain(s) { return String(s).replace(bidiControls, ''); }

// textOnly are the elements whose content is text alone: no <bdi> in them.
const textOnly = new Set(['OPTION', 'TEXTAREA', 'TITLE', 'BDI', 'STYLE', 'SCRIPT']);

// append adds children to el: Nodes as they are, anything else as text in
// its own <bdi> (isolated, its direction its own), without explicit
// directional controls.
function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    if (c instanceof Node) { el.append(c); continue; }
    const text = plain(c);
    if (text === '') continue;
    if (textOnly.has(el.tagName)) { el.append(document.createTextNode(text)); continue; }
    const b = document.createElement('bdi');
    b.textContent = text;
    el.append(b);
  }
  return el;
}

// page replaces the main area with a titled page and moves focus to its
// heading, as a screen reader expects after navigation.
function page(title, ...children) {
  const main = document.getElementById('main');
  const h1 = h('h1', { tabindex: '-1' }, title);
  main.className = '';
  main.replaceChildren(h1);
  append(main, children);
  document.title = plain(title) + ' · searchsvc';
  h1.focus({ preventScroll: true });
  return main;
}

// notice is a message box; kind is 'error', 'ok' or ''.
function notice(kind, ...text) {
  return h('div', { class: 'notice ' + (kind || ''), role: kind === 'error' ? 'alert' : 'status' }, text);
}

// status is a live region whose text can be changed later.
function liveRegion() {
  return h('div', { role: 'status', 'aria-live': 'polite' });
}

function say(region, kind, ...text) {
  region.replaceChildren(text.length ? notice(kind, text) : '');
}

let idSeq = 0;
function uid(prefix) { return prefix + '-' + (++idSeq); }

// field builds a labelled input with its help and an error slot wired by
// aria-describedby. It returns {wrap, input, setError}.
function field(label, attrs, help) {
  const id = uid('f');
  const helpId = id + '-help', errId = id + '-err';
  const multi = attrs.type === 'multiline';
  if (multi) { attrs = Object.assign({}, attrs, { rows: 4 }); delete attrs.type; }
  const input = h(multi ? 'textarea' : 'input', Object.assign({ id, 'aria-describedby': (help ? helpId + ' ' : '') + errId }, attrs));
  const err = h('p', { class: 'field-error', id: errId });
  const isCheck = attrs.type === 'checkbox';
  const wrap = isCheck
    ? h('div', null, h('label', { class: 'check', for: id }, input, label), help && h('p', { class: 'help', id: helpId }, help), err)
    : h('div', null, h('label', { for: id }, label), input, help && h('p', { class: 'help', id: helpId }, help), err);
  const setError = msg => {
    err.replaceChildren();
    append(err, msg || '');
    if (msg) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
  };
  return { wrap, input, setError };
}

// selectField builds a labelled select from [value, text] pairs.
function selectField(label, name, options, value) {
  const id = uid('s');
  const sel = h('select', { id, name }, options.map(([v, t]) => h('option', { value: v }, t)));
  sel.value = options.some(([v]) => v === value) ? value : options[0][0];
  return { wrap: h('label', { for: id }, label, sel), input: sel };
}

// confirmDialog asks a yes/no question in a modal dialog and resolves to
// true when the person confirms.
function confirmDialog(title, text, action) {
  return new Promise(resolve => {
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const ok = h('button', { type: 'button', class: 'danger' }, action);
    const titleId = uid('dlg');
    const dlg = h('dialog', { 'aria-labelledby': titleId },
      h('h2', { id: titleId }, title), h('p', null, text), h('div', { class: 'actions' }, cancel, ok));
    const done = v => { dlg.close(); dlg.remove(); resolve(v); };
    cancel.addEventListener('click', () => done(false));
    ok.addEventListener('click', () => done(true));
    dlg.addEventListener('cancel', e => { e.preventDefault(); done(false); });
    document.body.append(dlg);
    dlg.showModal();
    cancel.focus();
  });
}

// Dates: the API sends RFC 3339 UTC; people read their local time.
function fmtDate(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d) || d.getFullYear() < 1971) return '';
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

function ago(iso) {
  const d = new Date(iso);
  if (!iso || isNaN(d)) return '';
  const s = (d.getTime() - Date.now()) / 1000;
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const steps = [[60, 'second'], [3600, 'minute'], [86400, 'hour'], [604800, 'day'], [2629800, 'week'], [31557600, 'month']];
  let unit = 'year', div = 31557600;
  for (let i = 0; i < steps.length; i++) {
    if (Math.abs(s) < steps[i][0]) { unit = steps[i][1]; div = i === 0 ? 1 : steps[i - 1][0]; break; }
  }
  return rtf.format(Math.round(s / div), unit);
}

// waitWords says how long Retry-After seconds are, in words.
function waitWords(seconds) {
  const s = Math.max(1, Math.ceil(Number(seconds) || 0));
  if (s < 60) return s === 1 ? '1 second' : s + ' seconds';
  const m = Math.ceil(s / 60);
  return m === 1 ? '1 minute' : m + ' minutes';
}

function plural(n, one, many) { return n === 1 ? '1 ' + one : n.toLocaleString() + ' ' + many; }

// device names a session's browser and system from its user agent.
function device(ua) {
  ua = String(ua || '');
  if (!ua) return 'Unknown device';
  const tests = [
    [/Edg(e|A|iOS)?\//, 'Edge'], [/OPR\/|Opera/, 'Opera'], [/SamsungBrowser\//, 'Samsung Internet'],
    [/Firefox\/|FxiOS\//, 'Firefox'], [/HeadlessChrome\//, 'Headless Chrome'], [/Chrome\/|CriOS\//, 'Chrome'],
    [/Version\/[\d.]+.*Safari\//, 'Safari'], [/^curl\//, 'curl'], [/^Wget\//, 'Wget'],
    [/^Go-http-client\//, 'Go program'], [/^python-requests|^Python-urllib/, 'Python program'],
  ];
  const systems = [
    [/Windows NT/, 'Windows'], [/Android/, 'Android'], [/iPhone|iPad|iPod/, 'iOS'], [/CrOS/, 'ChromeOS'],
    [/Mac OS X|Macintosh/, 'macOS'], [/Linux|X11/, 'Linux'],
  ];
  const b = (tests.find(([re]) => re.test(ua)) || [null, null])[1];
  const o = (systems.find(([re]) => re.test(ua)) || [null, null])[1];
  if (b && o) return b + ' on ' + o;
  if (b || o) return b || o;
  return ua.length > 60 ? ua.slice(0, 57) + '…' : ua;
}

// safeURL returns an http(s) address to link to, or '' for anything else
// (a javascript: address in a feed must never become a link).
function safeURL(s) {
  try {
    const u = new URL(String(s));
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : '';
  } catch (e) {
    return '';
  }
}
