// Copy button for the one-time token page: <button data-copy="ID"> copies #ID's value.
(function () {
  "use strict";
  function announce(text) {
    var status = document.getElementById("copy-status");
    if (status) { status.textContent = text; }
  }
  function fallbackCopy(input) {
    input.focus();
    input.select();
    try { return document.execCommand("copy"); } catch (e) { return false; }
  }
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var input = document.getElementById(button.getAttribute("data-copy"));
      if (!input) { return; }
      var done = function () { announce("Copied to the clipboard."); button.textContent = "Copied"; };
      var failed = function () {
        if (fallbackCopy(input)) { done(); } else { announce("Copy failed: select the key and copy it by hand."); }
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(done, failed);
      } else {
        failed();
      }
    });
  });
  var token = document.getElementById("token");
  if (token) { token.addEventListener("focus", function () { token.select(); }); }
})();
