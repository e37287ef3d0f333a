// "Notify this device" on /settings/notifications: registers the service worker,
// asks for permission to show notifications, subscribes to Web Push with the server's
// application server key and stores the subscription (POST, CSRF token in a header),
// then refreshes the device list. No inline script: the page's CSP forbids it.
(function () {
  'use strict';
  const button = document.querySelector('[data-notify-device]');
  if (!button) {
    return;
  }
  const status = document.getElementById('notify-device-status');
  const say = (text) => {
    if (status) {
      status.textContent = text;
    }
  };
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    button.disabled = true;
    say('This browser cannot show Web Push notifications (on an iPhone, add Gatehouse to the Home Screen first).');
    return;
  }

  // keyBytes decodes the base64url application server key.
  const keyBytes = (b64) => {
    const s = atob(b64.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (b64.length % 4)) % 4));
    return Uint8Array.from(s, (c) => c.charCodeAt(0));
  };

  // refreshDevices swaps the device list for the server's current one.
  const refreshDevices = async () => {
    const res = await fetch(window.location.pathname, { credentials: 'same-origin' });
    if (!res.ok) {
      return;
    }
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    const fresh = doc.getElementById('devices');
    const current = document.getElementById('devices');
    if (fresh && current) {
      current.replaceWith(document.importNode(fresh, true));
    }
  };

  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const permission = await Notification.requestPermission();
      if (permission !== 'granted') {
        say('Notifications are blocked for this site: allow them in the browser settings, then try again.');
        return;
      }
      const registration = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
      await navigator.serviceWorker.ready;
      let subscription = await registration.pushManager.getSubscription();
      if (!subscription) {
        subscription = await registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: keyBytes(button.dataset.vapidKey),
        });
      }
      const res = await fetch(button.dataset.subscribeUrl, {
        method: 'POST',
        credentials: 'same-origin',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'X-CSRF-Token': button.dataset.csrf,
        },
        body: JSON.stringify(subscription.toJSON()),
      });
      if (!res.ok) {
        let message = 'status ' + res.status;
        try {
          message = (await res.json()).error.message;
        } catch (_) {
          // keep the status
        }
        say('Could not save this device: ' + message);
        return;
      }
      say('This device will be notified.');
      await refreshDevices();
    } catch (err) {
      say('Could not subscribe this device: ' + (err && err.message ? err.message : err));
    } finally {
      button.disabled = false;
    }
  });
})();
