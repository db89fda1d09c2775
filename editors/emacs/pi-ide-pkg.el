;; -*- no-byte-compile: t; lexical-binding: nil -*-
(define-package "pi-ide" "0.2.0"
  "Let the pi coding agent see what you are looking at"
  '((emacs "28.1"))
  :keywords '("tools" "convenience")
  :url "https://github.com/pi-ide-context/pi-ide-context")
