// The front page's example buttons: send the request from this page and show
// the status, the content type, the time taken and the body.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var base = new URL(".", document.baseURI);
  var origin = base.href.replace(/\/$/, "");
  document.querySelectorAll(".origin-url").forEach(function (el) {
    el.textContent = (el.dataset.prefix || "") + origin + (el.dataset.suffix || "");
  });
  document.querySelectorAll("button.try").forEach(function (button) {
    button.addEventListener("click", function () {
      var result = button.parentElement.querySelector(".result");
      var status = result.querySelector(".status");
      var body = result.querySelector(".body");
      var init = { method: button.dataset.method, headers: {} };
      if (button.dataset.body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = button.dataset.body;
      }
      button.disabled = true;
      status.textContent = "sending…";
      status.removeAttribute("data-status");
      body.textContent = "";
      var started = performance.now();
      fetch(new URL(button.dataset.target, base), init).then(function (res) {
        return res.text().then(function (text) {
          var ms = Math.round(performance.now() - started);
          status.dataset.status = res.status;
          status.className = "status " + (res.status >= 500 ? "s5" : res.status >= 400 ? "s4" : "s2");
          status.textContent = res.status + " " + res.statusText + " · " + (res.headers.get("Content-Type") || "no content type") + " · " + ms + " ms";
          body.textContent = text.length > 2000 ? text.slice(0, 2000) + "… (" + text.length + " characters)" : text;
        });
      }).catch(function (err) {
        status.dataset.status = "error";
        status.textContent = "request failed: " + err;
      }).finally(function () {
        button.disabled = false;
      });
    });
  });
});
