// After an action whose result is announced in the messages list (role="status"), move the
// focus there: a screen reader reads it at once, and a keyboard user goes on from it.
(function () {
  "use strict";
  var result = document.querySelector(".messages");
  if (!result) { return; }
  result.setAttribute("tabindex", "-1");
  result.focus();
})();
