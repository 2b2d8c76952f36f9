// The console's entry point: draws the view the URL's #fragment names, and sends the user
// to the sign-in page when there is no token or the API refuses it.
//   #/signin   #/catalog[/schema[/table]]   #/sql   #/lineage[/table]   #/flows   #/quality   #/metrics

import {UNAUTHENTICATED_EVENT, signOut, storedToken} from './api.js';
import {renderCatalog} from './catalog.js';
import {renderFlows} from './flows.js';
import {renderLineage} from './lineage.js';
import {renderMetrics} from './metrics.js';
import {renderQuality} from './quality.js';
import {stopRefreshing} from './refresh.js';
import {renderSignIn} from './signin.js';
import {closeStatement, renderSql} from './sql.js';

const view = document.getElementById('view');
const signOutButton = document.getElementById('sign-out');

// The page and its arguments: "#/catalog/sales/orders" is ['catalog', 'sales', 'orders'].
function parseFragment() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  return parts.length > 0 ? parts : ['catalog'];
}

function markNavigation(page) {
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('current', link.dataset.page === page);
  }
  signOutButton.hidden = page === 'signin';
}

// Draws the view of the current fragment; `message` is shown on the sign-in page.
function route(message) {
  closeStatement();
  stopRefreshing();
  const [page, ...args] = parseFragment();
  if (!storedToken() || page === 'signin') {
    markNavigation('signin');
    renderSignIn(view, typeof message === 'string' ? message : '');
    return;
  }
  markNavigation(page);
  if (page === 'sql') renderSql(view);
  else if (page === 'lineage') renderLineage(view, args[0]);
  else if (page === 'flows') renderFlows(view);
  else if (page === 'quality') renderQuality(view);
  else if (page === 'metrics') renderMetrics(view);
  else renderCatalog(view, args[0], args[1]);
}

window.addEventListener('hashchange', () => route());
window.addEventListener(UNAUTHENTICATED_EVENT, (event) => {
  route(`Signed out: the server refused the token (${event.detail.message}). Sign in again.`);
});
signOutButton.addEventListener('click', () => {
  closeStatement();
  stopRefreshing();
  signOut();
  location.hash = '#/signin';
});
route();
