// Gatehouse service worker: shows Web Push notifications and answers their Approve and
// Reject buttons. Served at /sw.js (scope "/") with Cache-Control: no-cache, so a new
// version reaches installed devices on their next visit.
//
// A push carries JSON from internal/notify/push: {kind, title, body, tag, url,
// actions: [{action, title, url}], outcome}. The tag is the prompt's id, so a reminder
// or the outcome replaces the question instead of stacking a second notification.
'use strict';

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let msg;
  try {
    msg = event.data ? event.data.json() : {};
  } catch (_) {
    msg = { title: 'Gatehouse', body: event.data ? event.data.text() : '' };
  }
  event.waitUntil(showMessage(msg));
});

// showMessage shows one push. A resolved prompt keeps no buttons: the outcome replaces
// the question under the same tag.
function showMessage(msg) {
  const resolved = msg.kind === 'resolved';
  const actions = resolved || !Array.isArray(msg.actions) ? [] : msg.actions;
  return self.registration.showNotification(msg.title || 'Gatehouse', {
    body: msg.body || msg.outcome || '',
    tag: msg.tag || '',
    renotify: false,
    requireInteraction: !resolved,
    icon: '/static/icons/icon-192.png',
    badge: '/static/icons/icon-192.png',
    data: { url: msg.url || '/inbox', actions: actions.map((a) => ({ action: a.action, url: a.url })) },
    actions: actions.map((a) => ({ action: a.action, title: a.title })),
  });
}

self.addEventListener('notificationclick', (event) => {
  const n = event.notification;
  const data = n.data || {};
  n.close();
  const chosen = (data.actions || []).find((a) => a.action === event.action);
  if (event.action && chosen) {
    event.waitUntil(decide(n, data, chosen));
    return;
  }
  event.waitUntil(openPage(data.url || '/inbox'));
});

// decide uses the button's single-use action link. It needs no cookie (the link is the
// credential), so it sends none, and asks for JSON to show the outcome in place of the
// question.
async function decide(n, data, chosen) {
  let text;
  try {
    const res = await fetch(chosen.url, {
      method: 'POST',
      credentials: 'omit',
      headers: { Accept: 'application/json' },
    });
    let body = {};
    try {
      body = await res.json();
    } catch (_) {
      // not JSON: fall through to the status
    }
    if (body && typeof body.message === 'string' && body.message) {
      text = body.message;
    } else if (res.ok) {
      text = chosen.action === 'accept' ? 'Approved' : 'Rejected';
    } else {
      text = 'Not decided (' + res.status + '): open the request to decide.';
    }
  } catch (_) {
    text = 'Could not reach Gatehouse: open the request to decide.';
  }
  return self.registration.showNotification(n.title, {
    body: text,
    tag: n.tag,
    renotify: false,
    icon: '/static/icons/icon-192.png',
    data: { url: data.url, actions: [] },
  });
}

// openPage focuses a window already showing url, or opens one.
async function openPage(url) {
  const target = new URL(url, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const w of windows) {
    if (w.url === target && 'focus' in w) {
      return w.focus();
    }
  }
  return self.clients.openWindow(target);
}
