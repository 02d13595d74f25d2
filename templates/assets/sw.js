// Service worker: after one visit, every page of the course and its assets are kept for offline use.
// The build writes this file to the site root as sw.js, filling in VERSION (a hash of everything
// precached) and PRECACHE (the pages and content-hashed assets, relative to this file).
const VERSION = "__VERSION__";
const PRECACHE = __PRECACHE__;
const PREFIX = `coursegen:${self.registration.scope}:`;
const CACHE = PREFIX + VERSION;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(PRECACHE)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  // Drop the caches of older builds of this course only: other courses may share the origin.
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith(PREFIX) && k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

async function networkFirst(request) {
  // Pages: the newest when online, the kept copy when not, the 404 page when neither exists.
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) cache.put(request, response.clone());
    return response;
  } catch (error) {
    return (await cache.match(request, { ignoreSearch: true })) ||
      (await cache.match(new URL("404.html", self.registration.scope))) || Promise.reject(error);
  }
}

async function cacheFirst(request) {
  // Hashed assets never change under one name; other files (media, Pyodide) are kept once fetched.
  // A file asked for with a query string (a cache buster) is answered by the copy this build
  // precached: that is the one that matches the build's other files.
  const cache = await caches.open(CACHE);
  const kept = await cache.match(request, { ignoreSearch: true });
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok) cache.put(request, response.clone());
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || !request.url.startsWith(self.registration.scope)) return;
  const isPage = request.mode === "navigate" || request.destination === "document";
  event.respondWith(isPage ? networkFirst(request) : cacheFirst(request));
});
