// The admin's one-time token page: focusing a token's field selects it, ready to copy.
(function () {
  "use strict";
  document.querySelectorAll("[data-select-on-focus]").forEach(function (input) {
    input.addEventListener("focus", function () { input.select(); });
  });
})();
