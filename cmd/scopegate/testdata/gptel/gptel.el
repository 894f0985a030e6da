;;; gptel.el --- what gptel's session code does with scopegate's files  -*- lexical-binding: t -*-

;; A test harness, not gptel: it reads YAML the way gptel's session code
;; does (yaml.el's `yaml-parse-string' with :object-type 'plist and
;; :sequence-type 'list) and writes the files in the forms gptel writes
;; them. Run by cmd/scopegate's Go tests as
;;   emacs --batch -Q -l testdata/gptel/gptel.el
;; with GPTEL_CMD naming the command and GPTEL_FILES the files, one a line:
;;
;;   dump     print every scalar of each YAML file, one record a line:
;;              FILE <TAB> PATH <TAB> TYPE <TAB> base64(VALUE)
;;            PATH is the key path ("paths.write[0]"), TYPE one of string,
;;            true, false, null, number, empty (an empty list), other.
;;   rewrite  rewrite each scope.yml as gptel's scope expansion writes it
;;            back: paths, org_roam_patterns and shell_commands a block
;;            mapping, every list item `    - "%s"' of the value yaml.el
;;            read, an empty list `    []'; any other top-level key as a
;;            simple value: a string `key: "%s"', a number or symbol
;;            `key: %s' (an empty list is the symbol nil), a list of
;;            strings `key:' then `  - %s' per item, unquoted (how
;;            network survives). GPTEL_ADD_WRITE, when set, is appended to
;;            paths.write first, as an expansion would.
;;   prompt   append to each system-prompts.org an entry as gptel logs a
;;            system prompt change, from GPTEL_PREVIOUS (left out when
;;            unset) to GPTEL_NEW, stamped with the local time.
;;
;; Exit code 3: yaml.el cannot be loaded.

(require 'cl-lib)
(require 'subr-x)

;; Debian's elpa-yaml keeps its sources in elpa-src; -Q does not load them.
(unless (locate-library "yaml")
  (dolist (dir (append (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/yaml-*")
                       (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa-src/yaml-*")))
    (when (file-directory-p dir) (add-to-list 'load-path dir))))

(defun gptel-test-files ()
  "The files named by GPTEL_FILES."
  (split-string (or (getenv "GPTEL_FILES") "") "\n" t))

(defun gptel-test-parse (file)
  "FILE parsed as gptel's session code parses YAML."
  (yaml-parse-string (with-temp-buffer
                       (insert-file-contents file)
                       (buffer-string))
                     :object-type 'plist
                     :sequence-type 'list))

(defun gptel-test-mapping-p (value)
  "Whether VALUE is a mapping as yaml.el returns it (a plist)."
  (and (consp value) (keywordp (car value))
       (not (memq (car value) '(:false :null)))
       (cl-evenp (length value))))

(defun gptel-test-emit (file path type value)
  "Print one dump record."
  (princ (format "%s\t%s\t%s\t%s\n" file path type
                 (base64-encode-string (encode-coding-string value 'utf-8) t))))

(defun gptel-test-walk (file path value)
  "Print the scalars of VALUE, read from FILE, below key PATH."
  (cond
   ((gptel-test-mapping-p value)
    (cl-loop for (k v) on value by #'cddr
             do (gptel-test-walk file
                                 (concat path (if (string-empty-p path) "" ".")
                                         (substring (symbol-name k) 1))
                                 v)))
   ((null value) (gptel-test-emit file path "empty" ""))
   ((consp value)
    (cl-loop for item in value for i from 0
             do (gptel-test-walk file (format "%s[%d]" path i) item)))
   ((stringp value) (gptel-test-emit file path "string" value))
   ((eq value t) (gptel-test-emit file path "true" "t"))
   ((eq value :false) (gptel-test-emit file path "false" ":false"))
   ((eq value :null) (gptel-test-emit file path "null" ":null"))
   ((numberp value) (gptel-test-emit file path "number" (format "%s" value)))
   (t (gptel-test-emit file path "other" (format "%S" value)))))

(defun gptel-test-rewrite (file)
  "Rewrite the scope.yml FILE in the form gptel's scope expansion writes."
  (let ((parsed (gptel-test-parse file))
        (add (getenv "GPTEL_ADD_WRITE")))
    (when (and add (not (string-empty-p add)))
      (let ((paths (plist-get parsed :paths)))
        (setq paths (plist-put paths :write (append (plist-get paths :write) (list add))))
        (setq parsed (plist-put parsed :paths paths))))
    (with-temp-file file
      (cl-loop for (key section) on parsed by #'cddr
               do (let ((name (substring (symbol-name key) 1)))
                    (if (memq key '(:paths :org_roam_patterns :shell_commands))
                        (progn
                          (insert (format "%s:\n" name))
                          (cl-loop for (sub items) on section by #'cddr
                                   do (progn
                                        (insert (format "  %s:\n" (substring (symbol-name sub) 1)))
                                        (if items
                                            (dolist (item items)
                                              (insert (format "    - \"%s\"\n" item)))
                                          (insert "    []\n")))))
                      (gptel-test-write-simple name section)))))))

(defun gptel-test-write-simple (name value)
  "Write the top-level key NAME with VALUE as gptel writes a simple value."
  (cond
   ((stringp value) (insert (format "%s: \"%s\"\n" name value)))
   ((or (numberp value) (symbolp value)) (insert (format "%s: %s\n" name value)))
   ((and (listp value) (stringp (car value)))
    (insert (format "%s:\n" name))
    (dolist (item value)
      (insert (format "  - %s\n" item))))
   (t (error "Unknown simple value type for key '%s': %S" name value))))

(defun gptel-test-log-prompt (file previous new)
  "Append a system prompt change from PREVIOUS (nil: none) to NEW to FILE."
  (let ((stamp (format-time-string "%a %b %d %H:%M:%S %Y")))
    (with-temp-buffer
      (insert (format "* System Prompt Change: %s\n  :PROPERTIES:\n  :TIMESTAMP: %s\n  :END:\n\n" stamp stamp))
      (when previous
        (insert "** Previous Prompt\n#+begin_example\n" previous "\n#+end_example\n\n"))
      (insert "** New Prompt\n#+begin_example\n" new "\n#+end_example\n\n")
      (append-to-file (point-min) (point-max) file))))

(let ((cmd (getenv "GPTEL_CMD")))
  (when (and (member cmd '("dump" "rewrite")) (not (require 'yaml nil t)))
    (message "yaml.el cannot be loaded; load-path: %S" load-path)
    (kill-emacs 3))
  (pcase cmd
    ("dump" (dolist (f (gptel-test-files))
              (gptel-test-walk f "" (gptel-test-parse f))))
    ("rewrite" (mapc #'gptel-test-rewrite (gptel-test-files)))
    ("prompt" (dolist (f (gptel-test-files))
                (gptel-test-log-prompt f (getenv "GPTEL_PREVIOUS") (getenv "GPTEL_NEW"))))
    (_ (message "unknown GPTEL_CMD %S" cmd) (kill-emacs 2))))
