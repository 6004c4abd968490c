// splitbrain report: copy buttons, the zoom switch, hover details, click-to-event and the
// event-table filter. Reads the page's own text only (textContent, never innerHTML).
(function () {
  'use strict';

  function copy(button) {
    var code = document.getElementById(button.getAttribute('data-copy'));
    if (!code) return;
    var text = code.textContent;
    var done = function () {
      button.textContent = 'Copied';
      setTimeout(function () { button.textContent = 'Copy'; }, 1500);
    };
    var fallback = function () {
      var range = document.createRange();
      range.selectNodeContents(code);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      try { if (document.execCommand('copy')) done(); } catch (e) { /* text stays selected */ }
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  }
  document.querySelectorAll('button.copy').forEach(function (button) {
    button.addEventListener('click', function () { copy(button); });
  });

  var switches = document.querySelectorAll('.views button');
  switches.forEach(function (button) {
    button.addEventListener('click', function () {
      var name = button.getAttribute('data-view');
      switches.forEach(function (b) { b.classList.toggle('on', b === button); });
      document.querySelectorAll('#timeline [data-view]').forEach(function (el) {
        if (el.tagName !== 'BUTTON') el.hidden = el.getAttribute('data-view') !== name;
      });
      document.querySelectorAll('#timeline [data-for]').forEach(function (el) {
        el.hidden = el.getAttribute('data-for') !== name;
      });
    });
  });

  var tip = document.createElement('div');
  tip.id = 'tip';
  tip.setAttribute('role', 'tooltip');
  tip.hidden = true;
  document.body.appendChild(tip);
  document.querySelectorAll('svg.timeline title').forEach(function (title) {
    title.parentNode.setAttribute('data-tip', title.textContent);
    title.parentNode.removeChild(title);
  });
  document.addEventListener('mouseover', function (event) {
    var el = event.target.closest ? event.target.closest('[data-tip]') : null;
    if (!el) { tip.hidden = true; return; }
    tip.textContent = el.getAttribute('data-tip');
    tip.hidden = false;
  });
  document.addEventListener('mousemove', function (event) {
    if (tip.hidden) return;
    var x = event.clientX + 14, y = event.clientY + 16;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 8) x = Math.max(8, event.clientX - w - 14);
    if (y + h > window.innerHeight - 8) y = Math.max(8, event.clientY - h - 12);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  });

  var rows = document.querySelectorAll('table.events tbody tr');
  var boxes = document.querySelectorAll('.filters input[data-client]');
  var onlyHot = document.getElementById('only-hot');
  var grep = document.getElementById('grep');
  var shown = document.getElementById('shown');
  function filter() {
    var on = {};
    boxes.forEach(function (box) { if (box.checked) on[box.getAttribute('data-client')] = true; });
    var hot = onlyHot && onlyHot.checked;
    var query = grep ? grep.value.toLowerCase() : '';
    var count = 0;
    rows.forEach(function (row) {
      var keep = row.getAttribute('data-c').split(' ').some(function (k) { return on[k]; }) &&
        (!hot || row.classList.contains('h')) &&
        (!query || row.textContent.toLowerCase().indexOf(query) >= 0);
      row.hidden = !keep;
      if (keep) count++;
    });
    if (shown) shown.textContent = count + ' of ' + rows.length + ' shown';
  }
  boxes.forEach(function (box) { box.addEventListener('change', filter); });
  if (onlyHot) onlyHot.addEventListener('change', filter);
  if (grep) grep.addEventListener('input', filter);
  filter();

  document.addEventListener('click', function (event) {
    var el = event.target.closest ? event.target.closest('[data-e]') : null;
    if (!el) return;
    var row = rows[Number(el.getAttribute('data-e'))];
    if (!row) return;
    if (row.hidden) {
      boxes.forEach(function (box) { box.checked = true; });
      if (onlyHot) onlyHot.checked = false;
      if (grep) grep.value = '';
      filter();
    }
    row.scrollIntoView({ block: 'center', behavior: 'smooth' });
    row.classList.add('flash');
    setTimeout(function () { row.classList.remove('flash'); }, 1800);
  });
})();
