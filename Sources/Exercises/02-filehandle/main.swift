/// Exercise 02: runs your Article.swift as `exercise-02-filehandle`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.fileHandle, program: .exercise).run(articleVariant)
