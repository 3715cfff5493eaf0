// WebShop page script: option radios and product links submit their action (as the
// original site's script did), and the done page shows the reward breakdown it carries
// as JSON. Everything it adds is built with DOM calls and textContent, never innerHTML.
"use strict";

const BREAKDOWN_ROWS = [
  ["total", "Reward R"],
  ["r_type", "Product type (r_type)"],
  ["r_att", "Attributes matched (r_att)"],
  ["r_option", "Options matched (r_option)"],
  ["r_price", "Within the price limit (r_price)"],
  ["num_attr_matches", "Attribute matches"],
  ["num_option_matches", "Option matches"],
  ["query_match", "Same search query as the goal's product"],
  ["category_match", "Category match"],
  ["title_score", "Product-name noun overlap"],
  ["noun_extractor", "Noun extractor"],
];

function submitAction(action) {
  const form = document.getElementById("action-form");
  form.elements.action.value = action;
  form.submit();
}

const COUNT_KEYS = new Set(["num_attr_matches", "num_option_matches"]);

function formatValue(key, value) {
  if (value === null || value === undefined) return "n/a (not in the goal)";
  if (typeof value === "boolean") return value ? "yes" : "no";
  // JSON drops the ".0" of whole floats: show every score with three decimals.
  if (typeof value === "number" && !COUNT_KEYS.has(key)) return value.toFixed(3);
  return String(value);
}

function showBreakdown(table, details) {
  for (const [key, label] of BREAKDOWN_ROWS) {
    if (!(key in details)) continue;
    const row = table.insertRow();
    const name = document.createElement("th");
    name.textContent = label;
    row.appendChild(name);
    row.insertCell().textContent = formatValue(key, details[key]);
  }
}

function hideIfBroken(image) {
  if (image.complete && image.naturalWidth === 0) image.hidden = true;
}

document.addEventListener("DOMContentLoaded", () => {
  // Product images come from other hosts; one that fails to load leaves no empty box.
  for (const image of document.querySelectorAll("img")) {
    image.addEventListener("error", () => { image.hidden = true; });
    hideIfBroken(image);
  }
  for (const radio of document.querySelectorAll('.radio-toolbar input[type="radio"]')) {
    radio.addEventListener("change", () => radio.form.requestSubmit());
  }
  for (const link of document.querySelectorAll("a.product-link[data-action]")) {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      submitAction(link.dataset.action);
    });
  }
  const data = document.getElementById("reward-details");
  const table = document.getElementById("reward-breakdown");
  if (data && table) {
    showBreakdown(table, JSON.parse(data.textContent));
    const again = document.createElement("a");
    again.href = "/";
    again.className = "btn btn-success again";
    again.id = "shop-again";
    again.textContent = "Shop again (new goal)";
    table.after(again);
  }
});
