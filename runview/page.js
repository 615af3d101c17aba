// Opens or closes every call; opens the call a link or the address names.
(function () {
  var calls = document.querySelectorAll("details.row");
  function all(open) {
    for (var i = 0; i < calls.length; i++) calls[i].open = open;
  }
  document.getElementById("expand").addEventListener("click", function () { all(true); });
  document.getElementById("collapse").addEventListener("click", function () { all(false); });
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") {
      el.open = true;
      el.scrollIntoView({block: "center"});
    }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
  document.body.setAttribute("data-calls", String(calls.length));
})();
