'use strict';
// search.js: the search page (GET /v1/search) and an item (GET
// /v1/items/{id}). The page's state lives in its URL, so a search can be
// bookmarked and the back button returns to it.

const queryHelp = [
  ['quarterly report', 'every word, anywhere'],
  ['"quarterly report"', 'these words in this order'],
  ['quart*', 'words starting with quart'],
  ['reprot~', 'words a letter or two away (report)'],
  ['-draft', 'without this word'],
  ['invoice OR receipt', 'either word; ( ) group'],
  ['from:alice  to:bob', 'sender, recipient'],
  ['subject:budget', 'in the title or file name'],
  ['kind:email  integration:slack', 'email, message, file or entry; by service'],
  ['filename:report  has:attachment', "an attachment's or a file's name; mail with attachments"],
  ['in:inbox  in:projects', 'a mailbox (inbox, sent, drafts…) or a folder'],
  ['after:2026-01-31  before:2026-03-01', 'by date'],
];

// keyHelp lists the keys the page answers (see onKey), shown under the
// query language's help.
const keyHelp = [
  ['/', 'to the search box'],
  ['Esc', 'out of the box; on an item, back to the results'],
  ['j  k', 'next, previous result'],
  ['Enter', 'open the result'],
];

const filterKeys = ['sort', 'integrationId', 'kind', 'after', 'before', 'group'];

// groupLimit is how many conversations a grouped search shows: the
// server answers them on one page (collapse=thread has no next one).
const groupLimit = '50';

async function pageSearch(params) {
  const q = params.get('q') || '';
  const region = liveRegion();
  const list = h('ol', { class: 'results', 'aria-label': 'Results' });
  const moreBox = h('div', { class: 'more' });

  const input = h('input', { type: 'search', name: 'q', id: 'q', value: q, autocomplete: 'off',
    placeholder: 'Search your mail, messages, files and feeds' });
  const here = location.href;
  const records = await connections().catch(() => []);
  await catalogue().catch(() => null);
  if (location.href !== here) return; // the person has moved on meanwhile
  const sort = selectField('Sort by', 'sort', [['relevance', 'Relevance'], ['date', 'Newest first']], params.get('sort'));
  const integ = selectField('Service', 'integrationId',
    [['', 'All services'], ...records.map(r => [r.id, recordName(r, records)])], params.get('integrationId'));
  const kind = selectField('Kind', 'kind',
    [['', 'All kinds'], ['email', 'Email'], ['message', 'Messages'], ['file', 'Files'], ['entry', 'Feed entries']], params.get('kind'));
  const after = field('From date', { type: 'date', name: 'after', value: params.get('after') || '' });
  const before = field('Before date', { type: 'date', name: 'before', value: params.get('before') || '' });
  const group = field('Group by conversation', { type: 'checkbox', name: 'group', value: 'thread', checked: params.get('group') === 'thread' },
    'One result a conversation, with how many messages it holds.');
  const form = h('form', { role: 'search', action: '/search', method: 'get' },
    h('label', { for: 'q', class: 'vh' }, 'Search for'),
    h('div', { class: 'searchbar' }, h('div', { class: 'searchbox' }, input, completions(input, () => form.requestSubmit())),
      h('button', { type: 'submit' }, 'Search')),
    h('details', { class: 'qhelp', id: 'qhelp' }, h('summary', null, 'How to search'),
      h('table', null, h('tbody', null, queryHelp.map(([ex, what]) => h('tr', null, h('td', null, h('code', null, ex)), h('td', null, what))))),
      h('table', { class: 'keys', 'aria-label': 'Keys' }, h('tbody', null, keyHelp.map(([keys, what]) =>
        h('tr', null, h('td', null, keys.split('  ').map(k => h('kbd', null, k))), h('td', null, what)))))),
    h('details', { class: 'filterbox', open: filterKeys.some(k => params.get(k)) },
      h('summary', null, 'Filters and order'),
      h('div', { class: 'filters' }, sort.wrap, integ.wrap, kind.wrap, after.wrap, before.wrap, group.wrap)));
  form.addEventListener('submit', e => {
    e.preventDefault();
    const p = new URLSearchParams();
    if (input.value.trim()) p.set('q', input.value.trim());
    for (const el of [sort.input, integ.input, kind.input, after.input, before.input]) {
      if (el.value && !(el.name === 'sort' && el.value === 'relevance')) p.set(el.name, el.value);
    }
    if (group.input.checked) p.set('group', 'thread');
    go('/search' + (p.toString() ? '?' + p : ''));
  });
  for (const el of [sort.input, integ.input, kind.input, group.input]) {
    el.addEventListener('change', () => { if (input.value.trim() || el !== sort.input) form.requestSubmit(); });
  }
  page('Search', form, region, list, moreBox);
  input.focus();

  const filtered = filterKeys.some(k => k !== 'sort' && params.get(k));
  if (!q && !filtered) return showRecent(region, list, moreBox, records.length);

  // The filters are words of the query language, ANDed with the whole of
  // what was typed (whose own ORs stay inside its parentheses).
  const extra = ['kind', 'after', 'before'].some(k => params.get(k));
  let query = q && extra ? '(' + q + ')' : q;
  if (params.get('kind')) query += ' kind:' + params.get('kind');
  if (params.get('after')) query += ' after:' + params.get('after');
  if (params.get('before')) query += ' before:' + params.get('before');
  const base = new URLSearchParams({ q: query.trim(), limit: '20' });
  if (params.get('sort') === 'date') base.set('sort', 'date');
  if (params.get('integrationId')) base.set('integrationId', params.get('integrationId'));
  const grouped = params.get('group') === 'thread';
  if (grouped) { base.set('collapse', 'thread'); base.set('limit', groupLimit); }
  document.title = plain(q || query.trim()) + ' · Search · searchsvc';

  // The pages "More results" added and the result last opened are kept in
  // this history entry, so that Back from an item shows the list as it
  // was, with the focus on that result.
  const kept = (history.state && history.state.search) || {};
  const cursors = [];
  const remember = change => history.replaceState({ ...history.state, search: { cursors, ...change } }, '', location.href);
  list.addEventListener('click', e => {
    const a = e.target.closest && e.target.closest('a[href]');
    if (a) remember({ opened: a.getAttribute('href') });
  });

  let shown = 0;
  let suggested = null; // the first page's "did you mean", kept as more pages come
  const load = async cursor => {
    const p = new URLSearchParams(base);
    if (cursor) p.set('cursor', cursor);
    region.replaceChildren(h('p', { class: 'count' }, 'Searching…'));
    let res;
    try {
      res = await api('GET', '/v1/search?' + p);
    } catch (err) {
      moreBox.replaceChildren();
      if (err.status === 400 && err.message === 'invalid query') {
        queryError(region, input, err.details, query.trim(), q && extra ? 1 : 0);
      } else if (err.status === 404 && err.code === 'not_found' && !shown) {
        say(region, 'error', 'This server does not offer search.');
      } else if (err.status !== 401) {
        say(region, 'error', explain(err).message);
      }
      return false;
    }
    if (cursor) cursors.push(cursor);
    const results = res.results || [];
    shown += results.length;
    append(list, results.map(resultItem));
    const total = Number(res.total) || shown;
    if (!cursor && res.suggestion) suggested = suggestion(res.suggestion, q, query, params);
    region.replaceChildren(h('p', { class: 'count' }, shown === 0 ? 'Nothing found for ' : (res.totalIsLowerBound ? 'More than ' : '') +
      (grouped ? plural(total, 'conversation', 'conversations') : plural(total, 'result', 'results')) + ' for ', h('strong', null, q || query.trim()),
      shown && shown < total ? ' (showing ' + shown.toLocaleString() + ')' : ''));
    if (res.relaxed && shown) region.append(h('p', { class: 'relaxed' }, 'No results with every word; showing results with most of them.'));
    if (suggested) region.append(suggested);
    moreBox.replaceChildren();
    if (res.nextCursor) {
      const more = h('button', { type: 'button', class: 'secondary' }, 'More results');
      more.addEventListener('click', async () => {
        more.disabled = true;
        const firstNew = list.children.length;
        if (await load(res.nextCursor)) remember({});
        const a = list.children[firstNew] && list.children[firstNew].querySelector('a');
        if (a) a.focus();
      });
      moreBox.append(more);
    }
    return true;
  };
  if (!await load('')) return;
  for (const c of kept.cursors || []) {
    if (location.href !== here || !await load(c)) return;
  }
  if (kept.opened) {
    const a = [...list.querySelectorAll('a[href]')].find(a => a.getAttribute('href') === kept.opened);
    if (a) a.focus();
  }
}

// completions lists, under the search box, completions of the word being
// typed (GET /v1/search/suggest): senders, titles and words of the
// person's own items. Arrow keys move through them, Enter takes one and
// searches (submit), Escape closes the list; they are text, never markup.
function completions(input, submit) {
  const list = h('ul', { class: 'completions', id: 'q-completions', role: 'listbox', 'aria-label': 'Suggestions', hidden: true });
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', list.id);
  input.setAttribute('aria-expanded', 'false');
  const kinds = { from: 'from', title: 'subject', word: '' };
  let items = [], active = -1, asked = 0, timer = 0;
  const close = () => {
    items = []; active = -1;
    list.hidden = true; list.replaceChildren();
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
  };
  const mark = at => {
    active = at;
    [...list.children].forEach((li, i) => {
      li.classList.toggle('active', i === at);
      li.setAttribute('aria-selected', i === at ? 'true' : 'false');
    });
    if (at >= 0) input.setAttribute('aria-activedescendant', list.children[at].id);
    else input.removeAttribute('aria-activedescendant');
  };
  const take = at => {
    input.value = items[at].query;
    close();
    submit();
  };
  const show = cs => {
    items = cs; active = -1;
    list.replaceChildren(...cs.map((c, i) => {
      const li = h('li', { role: 'option', id: 'q-completion-' + i, 'aria-selected': 'false', 'data-kind': c.kind },
        kinds[c.kind] ? h('span', { class: 'kind' }, kinds[c.kind]) : null, c.text);
      li.addEventListener('mousedown', e => { e.preventDefault(); take(i); });
      return li;
    }));
    list.hidden = !cs.length;
    input.setAttribute('aria-expanded', cs.length ? 'true' : 'false');
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value;
    const n = ++asked;
    if (!q.trim() || /\s$/.test(q)) { close(); return; }
    timer = setTimeout(async () => {
      try {
        const res = await api('GET', '/v1/search/suggest?' + new URLSearchParams({ q }));
        if (n === asked && input.value === q) show(res.completions || []);
      } catch (err) {
        if (n === asked) close(); // no completions is no harm
      }
    }, 80);
  });
  input.addEventListener('keydown', e => {
    if (list.hidden || e.isComposing) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const n = items.length;
      mark(e.key === 'ArrowDown' ? (active + 1) % n : (active <= 0 ? n - 1 : active - 1));
    } else if (e.key === 'Enter' && active >= 0) {
      e.preventDefault();
      take(active);
    } else if (e.key === 'Escape') {
      e.preventDefault(); // the list closes; the box keeps the focus
      asked++;
      close();
    }
  });
  input.addEventListener('blur', () => { asked++; close(); });
  return list;
}

// suggestion is the "did you mean" link of a search whose words the
// person's items lack: the same search (filters kept) with what was typed
// replaced by the answer's suggestion for it. The server suggests for the
// query sent, which wraps what was typed as "(q) kind:…" when filters are
// set; those it leaves as they are.
function suggestion(suggested, q, query, params) {
  let typed = suggested;
  if (q && query.trim() !== q) {
    const rest = query.slice(q.length + 2);
    if (!suggested.startsWith('(') || !suggested.endsWith(')' + rest)) return null;
    typed = suggested.slice(1, suggested.length - rest.length - 1);
  }
  const p = new URLSearchParams(params);
  p.set('q', typed);
  return h('p', { class: 'suggestion' }, 'Did you mean ',
    h('a', { href: '/search?' + p }, h('strong', null, typed)), '?');
}

// queryError says why the query sent cannot be read and marks where: the
// API's message ends "at N", N a byte offset in the query sent (which holds
// the box's text after offset characters: 1 when the filters wrapped it in
// parentheses). The offset becomes a character position in the box, whose
// word there is selected and shown marked under the box.
function queryError(region, input, details, sent, offset) {
  const words = [];
  let at = -1;
  for (const d of details) {
    const m = /^(.*) at (\d+)$/.exec(String(d.message || ''));
    words.push(sentence(m ? m[1] : d.message));
    if (m && at < 0) at = charIndex(sent, Number(m[2])) - offset;
  }
  const box = input.value;
  const parts = ['This search cannot be read. ', words.join(' ') || 'Check its quotes, brackets and field names.'];
  if (at >= 0 && at <= box.length) {
    let end = at;
    while (end < box.length && !/\s/.test(box[end])) end++;
    input.setSelectionRange(at, end);
    parts.push(h('span', { class: 'query-mark' }, 'Here: ',
      h('code', { dir: 'auto' }, box.slice(0, at), h('mark', null, box.slice(at, end) || ' '), box.slice(end))));
  }
  say(region, 'error', parts);
}

// charIndex turns a byte offset into the UTF-8 of s into the index of the
// same place in the string (UTF-16 code units, as inputs count).
function charIndex(s, bytes) {
  let i = 0, n = 0;
  for (const ch of s) {
    if (n >= bytes) break;
    const c = ch.codePointAt(0);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    i += ch.length;
  }
  return i;
}

// showRecent lists the newest items when there is nothing to search yet.
async function showRecent(region, list, moreBox, connected) {
  if (!connected) {
    say(region, '', 'Nothing to search yet. ', h('a', { href: '/integrations' }, 'Connect a service'), ' and its items appear here once synced.');
    return;
  }
  try {
    const res = await api('GET', '/v1/items?limit=20');
    const items = res.results || [];
    if (!items.length) { say(region, '', 'No items synced yet. They appear here as your services sync.'); return; }
    region.replaceChildren(h('h2', null, 'Recently synced'));
    append(list, items.map(it => resultItem({ id: it.id, title: it.title, from: it.from, date: it.date,
      integration: it.integration, kind: kindOfIntegration(it.integration) })));
  } catch (err) {
    if (err.status !== 401) say(region, 'error', explain(err).message);
  }
}

function kindOfIntegration(domain) {
  const m = session.catalogue && session.catalogue.get(domain);
  return m ? ({ email: 'email', chat: 'message', files: 'file', feed: 'entry' })[m.kind] || m.kind : '';
}

// resultItem renders one result. The snippet's fragments are text; the
// ones that matched the query are marked.
function resultItem(r) {
  // The connection, not only the service: a feed's title, a mailbox's label.
  const from = r.source ? integrationName(r.integration) + ' (' + r.source + ')' : integrationName(r.integration);
  const meta = [from, kindWord(r.kind), r.from, fmtDate(r.date)].filter(Boolean)
    .flatMap((w, i) => i ? [' · ', w] : [w]); // each its own text, isolated
  const snippet = Array.isArray(r.snippet) && r.snippet.length
    ? h('p', { class: 'snippet', dir: 'auto' }, r.snippet.map(f => (f && f.match) ? h('mark', null, String(f.text)) : String((f && f.text) || '')))
    : null;
  // The words the query matched go with the link, for the item page to
  // mark (itemText).
  const hl = Array.isArray(r.matched) && r.matched.length ? '?' + new URLSearchParams(r.matched.map(w => ['hl', String(w)])) : '';
  // A grouped search's result stands for its conversation (collapse=thread).
  const many = Number(r.threadCount) > 1
    ? h('p', { class: 'thread-count' }, plural(Number(r.threadCount), 'message', 'messages') + ' in this conversation') : null;
  return h('li', { class: 'result' },
    h('h2', null, h('a', { href: '/items/' + encodeURIComponent(r.id) + hl }, r.title || '(no title)')),
    h('p', { class: 'meta' }, meta), snippet, many);
}

// recordName names a connection, with when it was made if the person has
// several of the same service.
function recordName(r, all) {
  const name = integrationName(r.integration);
  return all.filter(x => x.integration === r.integration).length > 1 ? name + ' (' + fmtDate(r.connectedAt) + ')' : name;
}

async function pageItem(id) {
  page('Item');
  const here = location.href;
  let item;
  await catalogue().catch(() => null);
  try {
    item = (await api('GET', '/v1/items/' + encodeURIComponent(id))).result;
  } catch (err) {
    if (location.href !== here) return;
    if (err.status === 401) return;
    const msg = err.status === 404 ? 'This item does not exist, or is no longer kept here.'
      : err.status === 410 ? 'The text of this item is gone from the server.' : explain(err).message;
    page('Item', notice('error', msg), backLink());
    return;
  }
  if (location.href !== here) return;
  const link = originalLink(item);
  const itemPath = '/v1/items/' + encodeURIComponent(item.id);
  const original = originalDownload(item, itemPath);
  const to = Array.isArray(item.to) ? item.to.flatMap((a, i) => i ? [', ', a] : [a]) : [];
  page(item.title || '(no title)',
    backLink(),
    h('dl', { class: 'facts' },
      item.from && [h('dt', null, 'From'), h('dd', null, item.from)],
      to.length > 0 && [h('dt', null, 'To'), h('dd', null, to)],
      fmtDate(item.date) && [h('dt', null, 'Date'), h('dd', null, fmtDate(item.date))],
      [h('dt', null, 'Source'), h('dd', null, integrationName(item.integration))],
      Array.isArray(item.attachments) && item.attachments.length > 0 && [h('dt', null, 'Attachments'), h('dd', null,
        h('ul', { class: 'attachments' }, item.attachments.map(a => h('li', null,
          downloadLink(itemPath + '/attachments/' + encodeURIComponent(a.index), String(a.name), a.size, String(a.name)),
          h('span', { class: 'meta' }, ' ' + fmtSize(a.size))))))],
      link && [h('dt', null, 'Original'), h('dd', null,
        h('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, 'Open at ', new URL(link).hostname))],
      original && [h('dt', null, 'Download'), h('dd', null, original)]),
    h('div', { id: 'download-status', role: 'status', 'aria-live': 'polite' }),
    h('div', { class: 'item-text', id: 'item-text' }, itemText(item.text || '(no text)', new URLSearchParams(location.search).getAll('hl'))));
  const first = document.querySelector('#item-text mark');
  if (first) first.scrollIntoView({ block: 'center' });
  if (item.threadId) await showThread(item, here);
}

// originalDownload is the link to download an item's original, fetched
// from its source at that moment (GET /v1/items/{id}/original): a file
// item's file, an email's whole message; null for what has none (chat
// messages, feed entries).
function originalDownload(item, itemPath) {
  const m = session.catalogue && session.catalogue.get(item.integration);
  const kind = m ? m.kind : '';
  if (kind === 'files') return downloadLink(itemPath + '/original', item.title || 'file', item.size, 'The file (' + fmtSize(item.size) + ')');
  // A mail over 25 MiB was kept by its header alone: the server does not
  // download it.
  if (kind === 'email' && Number(item.size) <= 25 * 1024 * 1024) {
    return downloadLink(itemPath + '/original', (item.title || 'message') + '.eml', item.size, 'The whole message (.eml)');
  }
  return null;
}

// downloadInPage is the largest download fetched by the page itself,
// which holds it in memory until it is saved: a mail's 25 MiB, and room.
const downloadInPage = 30e6;

// downloadLink links to a download from the API. A click fetches it in
// the page first, so that a failure (the provider no longer has it, or
// cannot be reached) is said in words here rather than as a failed
// download in the browser's list; only what is larger than
// downloadInPage is left to the browser alone.
function downloadLink(href, name, size, text) {
  const a = h('a', { href, download: name, class: 'download' }, text);
  if (Number(size) <= downloadInPage) {
    a.addEventListener('click', e => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      fetchDownload(href, name);
    });
  }
  return a;
}

async function fetchDownload(href, name) {
  const status = document.getElementById('download-status');
  if (!status) return;
  status.replaceChildren(h('span', null, 'Downloading ', name, '…'));
  let res, blob;
  try {
    res = await fetch(href, { credentials: 'same-origin', cache: 'no-store' });
    if (res.ok) blob = await res.blob();
  } catch (e) {
    status.replaceChildren(res ? notice('error', 'The download of ', name, ' was cut off before its end; nothing was saved. Try again.')
      : notice('error', 'The server could not be reached. Check the connection and try again.'));
    return;
  }
  if (!res.ok) {
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (res.status === 401) { session.user = null; sessionEnded(); return; }
    status.replaceChildren(notice('error', downloadError(new APIError(res.status, data), name)));
    return;
  }
  const url = URL.createObjectURL(blob);
  const save = h('a', { href: url, download: dispositionName(res.headers.get('Content-Disposition'), name), hidden: '' });
  document.body.append(save);
  save.click();
  save.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  status.replaceChildren(h('span', null, 'Downloaded ', name, ' (' + fmtSize(blob.size) + ').'));
}

// downloadError says why a download failed, in words.
function downloadError(err, name) {
  switch (err.code) {
    case 'attachment_gone': return name + ' is no longer at the mail provider: the mail was deleted or moved since it was synced.';
    case 'file_gone': return name + ' is no longer there: it was deleted or moved since the last sync.';
    case 'no_original': return 'This item has no file to download.';
    case 'needs_reauth': return 'This connection must be connected again before anything can be downloaded from it (Connections).';
    case 'provider_failed': return 'The download failed: ' + err.message;
    case 'busy': return 'Other downloads of mail are under way on this server. Try again in a moment.';
  }
  return explain(err).message;
}

// dispositionName is the file name a Content-Disposition field gives,
// else fallback.
function dispositionName(v, fallback) {
  let m = /filename\*=utf-8''([^;]+)/i.exec(v || '');
  if (m) { try { return decodeURIComponent(m[1]); } catch (e) { /* fall through */ } }
  m = /filename="((?:[^"\\]|\\.)*)"/i.exec(v || '');
  if (m) return m[1].replace(/\\(.)/g, '$1');
  m = /filename=([^;\s]+)/i.exec(v || '');
  return m ? m[1] : fallback;
}

// showThread adds the conversation around an email to its page (GET
// /v1/items/{id}/thread), oldest first, the item itself marked as the
// current one; nothing when it is alone. A failure says so in words
// without hiding the item.
async function showThread(item, here) {
  let res;
  try {
    res = await api('GET', '/v1/items/' + encodeURIComponent(item.id) + '/thread');
  } catch (err) {
    if (location.href !== here || err.status === 401) return;
    document.getElementById('main').append(notice('error', 'The conversation could not be shown: ' + explain(err).message));
    return;
  }
  const all = res.results || [];
  if (location.href !== here || all.length < 2) return;
  const list = h('ol', { class: 'thread' }, all.map(m => {
    const line = [m.from, fmtDate(m.date)].filter(Boolean).flatMap((w, i) => i ? [' · ', w] : [w]);
    const title = m.title || '(no title)';
    return h('li', m.id === item.id ? { 'aria-current': 'page' } : null,
      m.id === item.id ? h('strong', null, title) : h('a', { href: '/items/' + encodeURIComponent(m.id) }, title),
      h('span', { class: 'meta' }, ' ', line));
  }));
  document.getElementById('main').append(h('section', { class: 'conversation', 'aria-labelledby': 'conv-h' },
    h('h2', { id: 'conv-h' }, 'Conversation (' + plural(all.length, 'message', 'messages') + ')'), list));
}

// fmtSize writes a size in bytes as a person reads it: 48 KB, 5.2 MB.
function fmtSize(n) {
  n = Number(n) || 0;
  if (n < 1000) return plural(n, 'byte', 'bytes');
  const units = ['KB', 'MB', 'GB'];
  let i = -1;
  do { n /= 1000; i++; } while (n >= 1000 && i < units.length - 1);
  return (n < 10 ? n.toFixed(1) : Math.round(n)) + ' ' + units[i];
}

// itemText is an item's text as one isolated run (as append makes it)
// whose words the search matched, as the search answer named them
// (matched, carried in the address as hl=), are marked: each a <mark>
// holding the word as append puts text, wherever the text writes the word
// whole. A word
// of a script written without spaces (Chinese, Japanese, Korean, matched
// as pairs of characters) is marked inside its run.
function itemText(text, words) {
  words = [...new Set(words.map(String).filter(w => w && w.length <= 64))].slice(0, 32);
  const run = document.createElement('bdi');
  if (!words.length) return append(run, text);
  const noSpaces = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
  const letter = '[\\p{L}\\p{N}\\p{M}]';
  const part = w => {
    const cs = [...w];
    return (noSpaces.test(cs[0]) ? '' : '(?<!' + letter + ')') + w.replace(/[\\^$.*+?()[\]{}|\/]/g, '\\$&') +
      (noSpaces.test(cs[cs.length - 1]) ? '' : '(?!' + letter + ')');
  };
  // Longer words first, so that a word is not marked as a shorter one.
  const re = new RegExp(words.sort((a, b) => b.length - a.length).map(part).join('|'), 'gu');
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (!m[0]) continue;
    append(run, text.slice(at, m.index));
    run.append(h('mark', null, m[0]));
    at = m.index + m[0].length;
  }
  return append(run, text.slice(at));
}

// onKey is the page's keyboard: / goes to the search box, Escape leaves
// it (or, on an item, goes back to the results), j and k move the focus
// down and up the results' links, whose Enter opens them as a link's does.
// Keys typed into a field are the field's, but for Escape in the box.
function onKey(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  const t = e.target;
  const box = document.getElementById('q');
  if (t === box && e.key === 'Escape') { e.preventDefault(); box.blur(); return; }
  if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
  if (e.key === '/') {
    e.preventDefault();
    if (box) box.focus(); else go('/search');
  } else if (e.key === 'Escape' && location.pathname.startsWith('/items/')) {
    e.preventDefault();
    const from = history.state && history.state.from;
    if (from && /^\/(search)?(\?|$)/.test(from)) history.back(); else go('/search');
  } else if ((e.key === 'j' || e.key === 'k') && !e.shiftKey) {
    const links = [...document.querySelectorAll('.results .result h2 a')];
    if (!links.length) return;
    e.preventDefault();
    const at = links.indexOf(document.activeElement);
    links[e.key === 'j' ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0)].focus();
  }
}
document.addEventListener('keydown', onKey);

function backLink() {
  const a = h('a', { href: '/search' }, '← Back');
  a.addEventListener('click', e => {
    if (history.state && history.state.inApp) { e.preventDefault(); history.back(); }
  });
  return h('p', null, a);
}

// originalLink is where the item lives at its provider, if it has an
// address: the item's link (a feed entry's, a Gmail message's), else a
// feed entry's id, which is often its web address, else a Gmail message's
// id. Only http(s) addresses become links.
function originalLink(item) {
  const link = safeURL(item.link);
  if (link) return link;
  const direct = safeURL(item.providerId);
  if (direct) return direct;
  if (item.integration === 'gmail' && /^[0-9a-zA-Z]+$/.test(item.providerId || '')) {
    return 'https://mail.google.com/mail/u/0/#all/' + item.providerId;
  }
  return '';
}
