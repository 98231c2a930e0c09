// Swagger UI on the contract served next to this page. No validator badge:
// it would send the contract to validator.swagger.io.
"use strict";
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: new URL(root.dataset.url, document.baseURI).href,
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    validatorUrl: null,
    displayRequestDuration: true,
    defaultModelsExpandDepth: -1
  });
});
