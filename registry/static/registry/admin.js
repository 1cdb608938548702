// The review admin's two behaviours (templates/admin/base_site.html loads this file).
(function () {
  "use strict";

  // After a decision, the page that follows the redirect shows its result in the messages
  // region (role="status"). The focus moves there, so a screen reader reads it at once and a
  // keyboard user goes on from it rather than from the top of the page.
  var result = document.getElementById("admin-messages");
  if (result) { result.focus(); }

  // A read-only table wider than a phone slides sideways inside its box; with nothing
  // focusable in it, the box itself takes the focus so the arrow keys can slide it.
  var boxes = document.querySelectorAll(".inline-group .tabular");
  Array.prototype.forEach.call(boxes, function (box) {
    if (box.querySelector("a[href], input:not([type=hidden]), select, textarea, button")) { return; }
    var heading = box.querySelector("h2");
    box.setAttribute("tabindex", "0");
    box.setAttribute("role", "region");
    if (heading) { box.setAttribute("aria-label", heading.textContent.trim()); }
  });
})();
