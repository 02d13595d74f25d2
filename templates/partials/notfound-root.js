// 404.html without base_url: the page is served at whatever path was missing, so its relative URLs point nowhere.
// Find the folder the site lives in (from the top down, the first that holds this build's stylesheet, named by
// its content hash) and make it the base of every URL after this script: stylesheets, import map, links.
(function () {
  var file = document.currentScript.getAttribute("data-site-file");
  var folders = location.pathname.split("/").slice(1, -1);
  for (var depth = 0; depth <= folders.length; depth++) {
    var root = "/" + folders.slice(0, depth).map(function (name) { return name + "/"; }).join("");
    var request = new XMLHttpRequest();
    try { request.open("HEAD", root + file, false); request.send(); } catch (error) { continue; }
    if (request.status === 200) {
      var base = document.createElement("base");
      base.href = root;
      document.head.prepend(base);
      return;
    }
  }
})();