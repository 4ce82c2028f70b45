// The observer's pages work without this script; it adds local times, copy buttons,
// expanding objects from a link's #fragment, and keys. It reads only the page itself:
// no request, no data from anywhere else.
'use strict';
(() => {
  document.documentElement.classList.add('js');

  // Local time beside the UTC one the server wrote.
  for (const t of document.querySelectorAll('time[datetime]')) {
    const local = t.querySelector('[data-local]');
    const when = new Date(t.getAttribute('datetime'));
    if (local && !Number.isNaN(when.getTime())) {
      local.textContent = when.toLocaleString(undefined, {
        year: 'numeric', month: 'short', day: 'numeric',
        hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
      });
    }
  }

  // Copy to the clipboard; where the Clipboard API is refused, a selected text area.
  const copy = async (text) => {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      const area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.append(area);
      area.select();
      const done = document.execCommand('copy');
      area.remove();
      return done;
    }
  };
  document.addEventListener('click', async (event) => {
    const button = event.target.closest('button');
    if (!button) return;
    if (button.dataset.copy !== undefined) {
      const ok = await copy(button.dataset.copy);
      button.textContent = ok ? 'copied' : 'copy failed';
      button.classList.toggle('done', ok);
      setTimeout(() => { button.textContent = 'copy'; button.classList.remove('done'); }, 1500);
    } else if (button.hasAttribute('data-expand') || button.hasAttribute('data-collapse')) {
      const open = button.hasAttribute('data-expand');
      for (const d of document.querySelectorAll('details.object')) d.open = open;
    } else if (button.hasAttribute('data-help')) {
      toggleHelp();
    }
  });

  // A link to #object-3 opens that object, on load and when the fragment changes.
  const openFragment = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (target && target.tagName === 'DETAILS') {
      target.open = true;
      target.scrollIntoView({ block: 'start' });
      focusItem(target);
    }
  };
  window.addEventListener('hashchange', openFragment);

  const help = document.getElementById('keys');
  const toggleHelp = () => { help.hidden = !help.hidden; };

  // j/k move between the page's items (releases, entries, objects), with a visible mark.
  const items = () => [...document.querySelectorAll('[data-nav]')];
  let current = null;
  const focusTarget = (item) =>
    item.querySelector(':scope > summary') || item.querySelector('a[href]') || item;
  function focusItem(item) {
    if (current) current.classList.remove('nav-current');
    current = item;
    item.classList.add('nav-current');
    const target = focusTarget(item);
    if (target === item && !item.hasAttribute('tabindex')) item.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
    item.scrollIntoView({ block: 'nearest' });
  }
  const move = (step) => {
    const all = items();
    if (!all.length) return;
    const here = current ? all.indexOf(current) : -1;
    const next = here < 0 ? (step > 0 ? 0 : all.length - 1)
      : Math.min(all.length - 1, Math.max(0, here + step));
    focusItem(all[next]);
  };
  const choose = (name) => {
    const radio = current && current.querySelector(`input[type=radio][name=${name}]`);
    if (radio) radio.checked = true;
  };
  const up = () => {
    const crumbs = document.querySelectorAll('header nav a');
    if (crumbs.length >= 2) location.href = crumbs[crumbs.length - 2].href;
  };

  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const tag = event.target.tagName;
    if (tag === 'INPUT' && ['text', 'search', 'password'].includes(event.target.type)) return;
    if (tag === 'TEXTAREA' || tag === 'SELECT') return;
    const compare = document.getElementById('compare');
    switch (event.key) {
      case 'j': move(1); break;
      case 'k': move(-1); break;
      case 'f': choose('from'); break;
      case 't': choose('to'); break;
      case 'c': if (compare) compare.requestSubmit(); else return; break;
      case 'p': {
        const link = current && current.querySelector('a.diff-prev');
        if (link) link.click(); else return;
        break;
      }
      case 'u': up(); break;
      case '?': toggleHelp(); break;
      case 'Escape': if (!help.hidden) help.hidden = true; else return; break;
      default: return;
    }
    event.preventDefault();
  });

  // The release list's search box filters the rows shown as one types; submitting it
  // asks the server, which searches the whole store (and works without this script).
  const filter = document.querySelector('input[data-filter]');
  if (filter) {
    filter.addEventListener('input', () => {
      const text = filter.value.trim().toLowerCase();
      for (const row of document.querySelectorAll('tr.release')) {
        row.hidden = text !== '' && !row.dataset.release.toLowerCase().includes(text);
      }
      for (const section of document.querySelectorAll('section.namespace')) {
        section.hidden = !section.querySelector('tr.release:not([hidden])');
      }
    });
  }

  openFragment();
})();
