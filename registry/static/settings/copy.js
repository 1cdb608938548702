// Copy buttons for the one-time token page: <button data-copy="ID"> copies #ID's value (an
// input) or its text (any other element, such as the Authorization header line).
(function () {
  "use strict";
  function announce(text) {
    var status = document.getElementById("copy-status");
    if (status) { status.textContent = text; }
  }
  function textOf(element) {
    return element.value !== undefined ? element.value : element.textContent.trim();
  }
  function fallbackCopy(element) {
    if (element.select) {
      element.focus();
      element.select();
    } else {
      var range = document.createRange();
      range.selectNodeContents(element);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    try { return document.execCommand("copy"); } catch (e) { return false; }
  }
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var input = document.getElementById(button.getAttribute("data-copy"));
      if (!input) { return; }
      var done = function () { announce("Copied to the clipboard."); button.textContent = "Copied"; };
      var text = textOf(input);
      var failed = function () {
        if (fallbackCopy(input)) { done(); } else { announce("Copy failed: select the text and copy it by hand."); }
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, failed);
      } else {
        failed();
      }
    });
  });
  var token = document.getElementById("token");
  if (token) { token.addEventListener("focus", function () { token.select(); }); }
})();
