'use strict';
// app.js: the router. The server answers every page of the app with the
// same document; this reads the path and shows that page. Links inside the
// app change the page without a reload, and the history keeps each page,
// so back and forward work and any page can be bookmarked.

const routes = [
  [/^\/(search)?$/, p => pageSearch(p)],
  [/^\/items\/([^/]+)$/, (p, m) => pageItem(decodeURIComponent(m[1]))],
  [/^\/integrations$/, p => pageConnections(p)],
  [/^\/sessions$/, () => pageSessions()],
  [/^\/account$/, () => pageAccount()],
  [/^\/admin$/, () => pageAdmin()],
];

const navLinks = [['/search', 'Search'], ['/integrations', 'Connections'], ['/sessions', 'Sessions'], ['/account', 'Account']];

// go shows path, adding it to the history (or replacing the current entry).
// A new entry notes the page it came from, which Escape on an item reads.
function go(path, replace) {
  if (replace) history.replaceState({ inApp: true }, '', path);
  else history.pushState({ inApp: true, from: location.pathname + location.search }, '', path);
  render();
}

async function render() {
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  if (path === '/login' || path === '/register') {
    if (session.user) return go(safeNext(params.get('next')) || '/search', true);
    header();
    return pageLogin(params, path === '/register');
  }
  if (!session.user) {
    let signedIn = false;
    try {
      signedIn = maybeSignedIn() && await refreshProfile();
    } catch (err) {
      page('searchsvc', notice('error', explain(err).message));
      return;
    }
    if (!signedIn) return go('/login?next=' + encodeURIComponent(path + location.search), true);
  }
  header();
  for (const [re, show] of routes) {
    const m = path.match(re);
    if (m) return show(params, m);
  }
  page('Not found', notice('error', 'There is no page here.'), h('p', null, h('a', { href: '/search' }, 'Go to search')));
}

// header is the navigation bar; it shows only to a signed-in person.
function header() {
  const top = document.getElementById('top');
  if (!session.user) { top.hidden = true; top.replaceChildren(); return; }
  const links = session.user.role === 'admin' ? [...navLinks, ['/admin', 'Administration']] : navLinks;
  const here = location.pathname === '/' ? '/search' : location.pathname;
  top.replaceChildren(
    h('a', { class: 'brand', href: '/search' }, h('img', { src: '/assets/' + iconName(), alt: '' }), 'searchsvc'),
    h('nav', { 'aria-label': 'Main' }, h('ul', null, links.map(([href, text]) =>
      h('li', null, h('a', { href, 'aria-current': here === href || here.startsWith(href + '/') ? 'page' : null }, text))))),
    h('div', { class: 'who' }, h('span', null, session.user.name),
      h('button', { type: 'button', class: 'link', onclick: signOut }, 'Sign out')));
  top.hidden = false;
}

// iconName is the hashed name of the icon, read from the document's link.
function iconName() {
  const link = document.querySelector('link[rel=icon]');
  return link ? link.getAttribute('href').replace('/assets/', '') : 'icon.svg';
}

// Links inside the app are followed without a reload; the API's own
// addresses (OAuth's authorize, which redirects to the provider),
// downloads, new tabs and modified clicks are left to the browser.
document.addEventListener('click', e => {
  const a = e.target.closest && e.target.closest('a[href]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  if (a.target || a.hasAttribute('data-external') || a.hasAttribute('download') || a.origin !== location.origin) return;
  if (a.pathname.startsWith('/v1/') || a.pathname.startsWith('/assets/')) return;
  e.preventDefault();
  go(a.pathname + a.search);
});

window.addEventListener('popstate', () => render());
history.replaceState({ inApp: false }, '', location.href);
render();
