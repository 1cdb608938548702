// After an action whose result is announced in a live region (role="status": the messages
// list, or a result marked data-result), move the focus there: a screen reader reads it at
// once, and a keyboard user goes on from it.
(function () {
  "use strict";
  var result = document.querySelector("[data-result]") || document.querySelector(".messages");
  if (!result) { return; }
  result.setAttribute("tabindex", "-1");
  result.focus();
})();
