/// Exercise 05: runs your Article.swift as `exercise-05-download-task-resume`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.downloadTaskResume, program: .exercise).run(articleVariant)
