// The npm libraries the playground uses, bundled by esbuild into _build/vendor.js (site/playground_build.py).
export { EditorView, basicSetup } from "codemirror";
export { keymap } from "@codemirror/view";
export { Prec, StateEffect, StateField } from "@codemirror/state";
export { Decoration } from "@codemirror/view";
export { indentUnit } from "@codemirror/language";
export { python } from "@codemirror/lang-python";
export { default as uPlot } from "uplot";
