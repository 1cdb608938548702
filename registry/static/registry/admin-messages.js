// The review admin: after a decision, the page that follows the redirect shows its result in
// the messages region (role="status"). The focus moves there, so a screen reader reads it at
// once and a keyboard user goes on from it rather than from the top of the page.
(function () {
  "use strict";
  var result = document.getElementById("admin-messages");
  if (result) { result.focus(); }
})();
