"""The project's YMYL lexicon: drug names, condition names and medical usage patterns.

Why it exists: widemem 2.0.2 leaves most health facts to its extraction LLM,
which tags a fact's YMYL category; the regex rule (``engine.ymyl``) is only the
fallback, and it misses medications and oblique mentions ("takes metformin for
type 2 diabetes" holds a single weak term; "my sugar levels have been weird"
none). The reference engine has no LLM by default, so this lexicon stands in
for that tag. It is used only with ``EngineConfig(ymyl_classifier="lexicon")``;
widemem's rule stays the default.

The lists are written from general medical knowledge (commonly prescribed
generics and brand names, chronic or serious conditions), NOT derived from the
timeline generator's vocabulary (``timelines/vocab.py``): the ymyl_decay report
counts how many of the generator's drug names happen to be here, so the
measured recall is not a lookup of the test set.

This module holds data and one matcher, no YMYL verdict: ``engine.ymyl``
combines it with widemem's rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Commonly prescribed generics, by area. Names that are also everyday words
# (lithium, iron, ...) are in CONTEXT_DRUGS instead and need a dosing verb.
GENERIC_DRUGS: tuple[str, ...] = (
    # lipids
    "atorvastatin", "simvastatin", "rosuvastatin", "pravastatin", "lovastatin", "pitavastatin",
    "ezetimibe", "fenofibrate", "gemfibrozil", "icosapent ethyl", "evolocumab", "alirocumab",
    "inclisiran",
    # blood pressure, heart
    "lisinopril", "enalapril", "ramipril", "benazepril", "quinapril", "captopril", "fosinopril",
    "perindopril", "trandolapril", "losartan", "valsartan", "irbesartan", "olmesartan",
    "candesartan", "telmisartan", "sacubitril", "amlodipine", "nifedipine", "diltiazem",
    "verapamil", "felodipine", "metoprolol", "atenolol", "carvedilol", "propranolol",
    "bisoprolol", "nebivolol", "labetalol", "nadolol", "hydrochlorothiazide", "chlorthalidone",
    "furosemide", "bumetanide", "torsemide", "spironolactone", "eplerenone", "triamterene",
    "indapamide", "metolazone", "clonidine", "hydralazine", "doxazosin", "terazosin", "prazosin",
    "guanfacine", "isosorbide mononitrate", "isosorbide dinitrate", "nitroglycerin", "ranolazine",
    "digoxin", "amiodarone", "sotalol", "flecainide", "dofetilide", "dronedarone", "midodrine",
    "fludrocortisone",
    # blood thinners
    "warfarin", "apixaban", "rivaroxaban", "dabigatran", "edoxaban", "clopidogrel", "prasugrel",
    "ticagrelor", "enoxaparin", "heparin", "aspirin",
    # diabetes
    "metformin", "glipizide", "glyburide", "glimepiride", "pioglitazone", "sitagliptin",
    "saxagliptin", "linagliptin", "alogliptin", "empagliflozin", "dapagliflozin",
    "canagliflozin", "ertugliflozin", "liraglutide", "semaglutide", "dulaglutide", "exenatide",
    "tirzepatide", "insulin glargine", "insulin lispro", "insulin aspart", "insulin detemir",
    "insulin degludec", "acarbose", "repaglinide", "glucagon",
    # thyroid, hormones
    "levothyroxine", "liothyronine", "methimazole", "propylthiouracil", "estradiol",
    "conjugated estrogens", "medroxyprogesterone", "progesterone", "norethindrone",
    "levonorgestrel", "drospirenone", "ethinyl estradiol", "testosterone", "desmopressin",
    "cabergoline", "bromocriptine", "somatropin",
    # stomach, gut
    "omeprazole", "esomeprazole", "pantoprazole", "lansoprazole", "rabeprazole",
    "dexlansoprazole", "famotidine", "ranitidine", "sucralfate", "ondansetron", "metoclopramide",
    "promethazine", "prochlorperazine", "dicyclomine", "mesalamine", "sulfasalazine",
    "budesonide", "linaclotide", "lubiprostone", "rifaximin", "loperamide",
    # mood, sleep, psychiatry
    "sertraline", "fluoxetine", "citalopram", "escitalopram", "paroxetine", "fluvoxamine",
    "venlafaxine", "desvenlafaxine", "duloxetine", "bupropion", "mirtazapine", "trazodone",
    "amitriptyline", "nortriptyline", "doxepin", "imipramine", "vortioxetine", "vilazodone",
    "esketamine", "alprazolam", "lorazepam", "clonazepam", "diazepam", "temazepam", "buspirone",
    "hydroxyzine", "zolpidem", "eszopiclone", "quetiapine", "aripiprazole", "risperidone",
    "olanzapine", "ziprasidone", "lurasidone", "haloperidol", "clozapine", "paliperidone",
    "cariprazine", "brexpiprazole", "lumateperone",
    # neurology
    "lamotrigine", "valproate", "divalproex", "carbamazepine", "oxcarbazepine", "topiramate",
    "levetiracetam", "gabapentin", "pregabalin", "phenytoin", "lacosamide", "zonisamide",
    "methylphenidate", "amphetamine", "lisdexamfetamine", "dextroamphetamine", "atomoxetine",
    "modafinil", "armodafinil", "donepezil", "memantine", "rivastigmine", "galantamine",
    "levodopa", "carbidopa", "ropinirole", "pramipexole", "rasagiline", "selegiline",
    "benztropine", "sumatriptan", "rizatriptan", "zolmitriptan", "eletriptan", "erenumab",
    "galcanezumab", "fremanezumab", "rimegepant", "ubrogepant", "ocrelizumab",
    "dimethyl fumarate", "fingolimod", "glatiramer", "teriflunomide", "interferon beta",
    # pain, muscles
    "tramadol", "oxycodone", "hydrocodone", "morphine", "codeine", "fentanyl", "hydromorphone",
    "methadone", "buprenorphine", "naloxone", "naltrexone", "tapentadol", "ibuprofen",
    "naproxen", "meloxicam", "diclofenac", "celecoxib", "indomethacin", "ketorolac",
    "acetaminophen", "nabumetone", "etodolac", "cyclobenzaprine", "methocarbamol", "tizanidine",
    "baclofen", "carisoprodol",
    # steroids
    "prednisone", "prednisolone", "methylprednisolone", "dexamethasone", "hydrocortisone",
    # lungs, allergy
    "albuterol", "levalbuterol", "fluticasone", "mometasone", "beclomethasone", "salmeterol",
    "formoterol", "tiotropium", "ipratropium", "montelukast", "umeclidinium", "vilanterol",
    "theophylline", "roflumilast", "cetirizine", "loratadine", "fexofenadine",
    "levocetirizine", "diphenhydramine", "azelastine", "epinephrine", "omalizumab",
    "dupilumab", "benzonatate",
    # infections
    "amoxicillin", "amoxicillin-clavulanate", "azithromycin", "clarithromycin", "doxycycline",
    "minocycline", "cephalexin", "cefdinir", "cefuroxime", "ceftriaxone", "ciprofloxacin",
    "levofloxacin", "moxifloxacin", "sulfamethoxazole", "trimethoprim", "nitrofurantoin",
    "metronidazole", "clindamycin", "penicillin", "vancomycin", "linezolid", "rifampin",
    "isoniazid", "fluconazole", "terbinafine", "nystatin", "ketoconazole", "itraconazole",
    "acyclovir", "valacyclovir", "famciclovir", "oseltamivir", "tenofovir", "emtricitabine",
    "efavirenz", "dolutegravir", "bictegravir", "raltegravir", "lamivudine", "abacavir",
    "zidovudine", "sofosbuvir", "ledipasvir", "ritonavir", "nirmatrelvir", "ivermectin",
    "permethrin", "hydroxychloroquine",
    # immune system, rheumatology, transplant
    "methotrexate", "leflunomide", "adalimumab", "etanercept", "infliximab", "certolizumab",
    "golimumab", "tocilizumab", "ustekinumab", "secukinumab", "ixekizumab", "risankizumab",
    "vedolizumab", "rituximab", "tofacitinib", "upadacitinib", "baricitinib", "apremilast",
    "azathioprine", "mycophenolate", "tacrolimus", "cyclosporine", "sirolimus",
    # gout, bones
    "allopurinol", "febuxostat", "colchicine", "probenecid", "alendronate", "risedronate",
    "ibandronate", "zoledronic acid", "denosumab", "raloxifene", "teriparatide",
    # urology
    "finasteride", "dutasteride", "tamsulosin", "alfuzosin", "silodosin", "oxybutynin",
    "tolterodine", "solifenacin", "mirabegron", "sildenafil", "tadalafil", "vardenafil",
    "phenazopyridine",
    # cancer
    "tamoxifen", "anastrozole", "letrozole", "exemestane", "capecitabine", "imatinib",
    "pembrolizumab", "nivolumab", "trastuzumab", "bevacizumab", "cyclophosphamide",
    "doxorubicin", "cisplatin", "carboplatin", "paclitaxel", "docetaxel", "lenalidomide",
    "ibrutinib", "enzalutamide", "abiraterone", "bicalutamide", "leuprolide", "hydroxyurea",
    # kidneys, blood, other
    "potassium chloride", "calcitriol", "sevelamer", "epoetin alfa", "filgrastim",
    "cyanocobalamin", "varenicline", "disulfiram", "acamprosate", "isotretinoin", "tretinoin",
    "clobetasol", "triamcinolone", "mupirocin", "latanoprost", "timolol", "brimonidine",
    "dorzolamide", "phentermine", "orlistat", "meclizine", "scopolamine", "pseudoephedrine",
)

# Brand names that are also first names, places or companies (Allegra, Norco,
# Soma, Exelon) are left out: a false hit makes a memory immune to decay.
BRAND_DRUGS: tuple[str, ...] = (
    "Lipitor", "Zocor", "Crestor", "Pravachol", "Livalo", "Zetia", "Tricor", "Vascepa",
    "Repatha", "Praluent", "Leqvio", "Plavix", "Eliquis", "Xarelto", "Pradaxa", "Coumadin",
    "Jantoven", "Brilinta", "Lovenox", "Lasix", "Bumex", "Demadex", "Aldactone", "Norvasc",
    "Toprol", "Lopressor", "Coreg", "Tenormin", "Inderal", "Bystolic", "Zebeta", "Cozaar",
    "Hyzaar", "Diovan", "Benicar", "Avapro", "Atacand", "Micardis", "Zestril", "Prinivil",
    "Vasotec", "Altace", "Lotensin", "Accupril", "Lotrel", "Exforge", "Entresto", "Cardizem",
    "Calan", "Procardia", "Catapres", "Tenex", "Intuniv", "Cardura", "Hytrin", "Minipress",
    "Imdur", "Nitrostat", "Ranexa", "Lanoxin", "Pacerone", "Multaq", "Tikosyn",
    "Glucophage", "Januvia", "Janumet", "Jardiance", "Farxiga", "Invokana", "Steglatro",
    "Ozempic", "Wegovy", "Rybelsus", "Trulicity", "Victoza", "Saxenda", "Mounjaro", "Zepbound",
    "Byetta", "Bydureon", "Actos", "Amaryl", "Glucotrol", "Tradjenta", "Onglyza", "Lantus",
    "Toujeo", "Basaglar", "Humalog", "Novolog", "Fiasp", "Admelog", "Levemir", "Tresiba",
    "Humulin", "Novolin", "Soliqua", "Xultophy", "Afrezza", "Synthroid", "Levoxyl", "Tirosint",
    "Unithroid", "Cytomel", "Tapazole", "Premarin", "Provera", "Prometrium", "Loestrin",
    "Yasmin", "Nexplanon", "Mirena", "Depo-Provera", "AndroGel",
    "Prilosec", "Nexium", "Protonix", "Prevacid", "Dexilant", "Aciphex", "Pepcid", "Zantac",
    "Carafate", "Zofran", "Reglan", "Phenergan", "Bentyl", "Lialda", "Asacol", "Entocort",
    "Uceris", "Linzess", "Amitiza", "Xifaxan", "Imodium",
    "Zoloft", "Prozac", "Celexa", "Lexapro", "Paxil", "Luvox", "Effexor", "Pristiq", "Cymbalta",
    "Wellbutrin", "Remeron", "Desyrel", "Elavil", "Pamelor", "Trintellix", "Viibryd",
    "Spravato", "Auvelity", "Xanax", "Ativan", "Klonopin", "Valium", "Restoril", "Buspar",
    "Vistaril", "Ambien", "Lunesta", "Seroquel", "Abilify", "Risperdal", "Zyprexa", "Geodon",
    "Latuda", "Haldol", "Clozaril", "Invega", "Vraylar", "Rexulti", "Caplyta", "Lithobid",
    "Lamictal", "Depakote", "Tegretol", "Trileptal", "Topamax", "Keppra", "Neurontin", "Lyrica",
    "Dilantin", "Vimpat", "Ritalin", "Concerta", "Focalin", "Adderall", "Vyvanse", "Strattera",
    "Provigil", "Nuvigil", "Aricept", "Namenda", "Razadyne", "Sinemet", "Requip",
    "Mirapex", "Azilect", "Cogentin", "Imitrex", "Maxalt", "Zomig", "Relpax", "Aimovig",
    "Emgality", "Ajovy", "Nurtec", "Ubrelvy", "Ocrevus", "Tecfidera", "Gilenya", "Copaxone",
    "Aubagio", "Avonex", "Rebif", "Ingrezza", "Austedo",
    "Ultram", "OxyContin", "Percocet", "Vicodin", "Dilaudid", "Suboxone", "Subutex", "Narcan",
    "Vivitrol", "Tylenol", "Advil", "Motrin", "Aleve", "Excedrin", "Celebrex", "Mobic",
    "Voltaren", "Toradol", "Flexeril", "Robaxin", "Zanaflex", "Medrol", "Decadron",
    "ProAir", "Ventolin", "Proventil", "Xopenex", "Flovent", "Advair", "Symbicort", "Breo",
    "Spiriva", "Singulair", "Trelegy", "Dulera", "Qvar", "Pulmicort", "Xolair", "Dupixent",
    "Flonase", "Nasonex", "Zyrtec", "Claritin", "Xyzal", "Benadryl", "Auvi-Q",
    "Tessalon", "Sudafed",
    "Augmentin", "Zithromax", "Z-Pak", "Biaxin", "Cipro", "Levaquin", "Keflex", "Omnicef",
    "Bactrim", "Macrobid", "Flagyl", "Cleocin", "Diflucan", "Lamisil", "Valtrex", "Zovirax",
    "Tamiflu", "Paxlovid", "Truvada", "Descovy", "Biktarvy", "Genvoya", "Triumeq", "Harvoni",
    "Epclusa", "Plaquenil", "Trexall", "Otrexup", "Humira", "Enbrel", "Remicade", "Cimzia",
    "Simponi", "Actemra", "Stelara", "Cosentyx", "Taltz", "Skyrizi", "Entyvio", "Rituxan",
    "Xeljanz", "Rinvoq", "Olumiant", "Otezla", "Imuran", "CellCept", "Prograf",
    "Zyloprim", "Uloric", "Colcrys", "Fosamax", "Actonel", "Boniva", "Reclast", "Prolia",
    "Evista", "Forteo", "Proscar", "Propecia", "Avodart", "Flomax", "Uroxatral", "Ditropan",
    "Detrol", "Vesicare", "Myrbetriq", "Viagra", "Cialis", "Levitra", "Pyridium",
    "Nolvadex", "Arimidex", "Femara", "Aromasin", "Xeloda", "Gleevec", "Keytruda", "Opdivo",
    "Herceptin", "Avastin", "Revlimid", "Imbruvica", "Xtandi", "Zytiga", "Casodex", "Lupron",
    "Hydrea", "Epogen", "Procrit", "Neupogen", "Renvela", "Chantix", "Antabuse", "Accutane",
    "Retin-A", "Xalatan", "Lumigan", "Timoptic", "Alphagan", "Adipex", "Contrave", "Antivert",
)

# Drug names that are also everyday words: a drug only after a dosing verb
# ("takes lithium", "on iron supplements" stays out; "lithium battery" too).
CONTEXT_DRUGS: tuple[str, ...] = ("lithium", "iron", "potassium", "melatonin", "nicotine patch")
_DOSING_VERBS = (
    r"takes|taking|took|is on|was on|been on|started|starting|stopped|switched to|prescribed|"
    r"uses|using|a dose of|doses of"
)

# Chronic or serious conditions, with the spellings people use. Possessives are
# written out ("parkinson's"); an optional plural "s" is added by the matcher.
CONDITIONS: tuple[str, ...] = (
    "diabetes", "diabetic", "type 1 diabetes", "type 2 diabetes", "prediabetes", "prediabetic",
    "hypertension", "high blood pressure", "hypotension", "low blood pressure",
    "high cholesterol", "hyperlipidemia", "heart disease", "coronary artery disease",
    "heart failure", "congestive heart failure", "atrial fibrillation", "afib", "a-fib",
    "arrhythmia", "irregular heartbeat", "angina", "heart attack", "myocardial infarction",
    "had a stroke", "suffered a stroke", "mini-stroke", "stroke survivor", "cardiomyopathy",
    "heart murmur", "heart condition", "blood clot", "deep vein thrombosis", "DVT",
    "pulmonary embolism", "aneurysm",
    "asthma", "asthmatic", "COPD", "emphysema", "chronic bronchitis", "cystic fibrosis",
    "pulmonary fibrosis", "sleep apnea", "tuberculosis", "pneumonia",
    "epilepsy", "epileptic", "seizure", "seizure disorder", "migraine", "multiple sclerosis",
    "parkinson's", "parkinsons", "parkinson's disease", "alzheimer's", "alzheimers",
    "alzheimer's disease", "dementia", "amyotrophic lateral sclerosis", "huntington's disease",
    "neuropathy", "cerebral palsy", "muscular dystrophy", "myasthenia gravis", "narcolepsy",
    "concussion", "traumatic brain injury", "spinal cord injury",
    "lupus", "rheumatoid arthritis", "arthritis", "osteoarthritis", "psoriatic arthritis",
    "psoriasis", "eczema", "gout", "fibromyalgia", "osteoporosis", "ankylosing spondylitis",
    "crohn's", "crohns", "crohn's disease", "ulcerative colitis", "colitis",
    "inflammatory bowel disease", "IBD", "irritable bowel syndrome", "IBS", "celiac",
    "celiac disease", "coeliac", "GERD", "acid reflux", "cirrhosis", "hepatitis",
    "hepatitis B", "hepatitis C", "fatty liver", "pancreatitis", "kidney disease",
    "chronic kidney disease", "CKD", "kidney failure", "renal failure", "kidney stone",
    "cancer", "leukemia", "lymphoma", "melanoma", "myeloma", "tumor", "tumour", "carcinoma",
    "sarcoma", "HIV", "hypothyroidism", "hyperthyroidism", "thyroid condition",
    "thyroid disease", "underactive thyroid", "overactive thyroid", "hashimoto's",
    "graves' disease", "graves disease", "addison's disease", "cushing's", "anemia", "anaemia",
    "anemic", "sickle cell", "hemophilia", "thalassemia", "glaucoma", "macular degeneration",
    "depression", "clinical depression", "major depressive disorder", "bipolar",
    "bipolar disorder", "schizophrenia", "schizoaffective", "PTSD", "OCD", "ADHD",
    "panic disorder", "panic attack", "generalized anxiety", "eating disorder", "anorexia",
    "bulimia", "insomnia", "chronic pain", "chronic fatigue", "long covid", "lyme disease",
    "endometriosis", "PCOS", "polycystic ovary syndrome", "pregnant", "pregnancy",
    "hypoglycemia", "hyperglycemia", "food allergy", "organ transplant", "kidney transplant",
    "liver transplant", "heart transplant",
)

# Medical usage, whatever the drug or condition: dosing, devices, treatments,
# and oblique ways of describing a condition. (category, regex) pairs.
USAGE_PATTERNS: tuple[tuple[str, str], ...] = (
    # A dose needs its number: "MG" alone is a car, "units" an apartment.
    ("pharmaceutical", r"\d+(?:\.\d+)?\s?(?:mg|mcg|milligrams?|micrograms?)|units of insulin"),
    ("pharmaceutical", r"prescribed|prescriptions? for|prescription refills?"),
    ("pharmaceutical", r"(?:takes|taking|took|needs|started|stopped|skips|forgets) (?:\w+ )?"
                       r"(?:medications?|medicines?|meds|pills|tablets|injections)"),
    ("pharmaceutical", r"(?:is|was|been|stays) on (?:\w+ )?(?:medications?|meds)"),
    ("pharmaceutical", r"(?:medications?|medicines?|meds|pills|tablets|injections) for"),
    ("pharmaceutical", r"doses|dosage"),
    ("pharmaceutical", r"inhalers?|nebulizer|insulin|insulin pump|epi-?pen|epi pen"),
    ("pharmaceutical", r"blood thinners?|beta[- ]blockers?|statins?|antidepressants?|"
                       r"antibiotics|antihistamines?|anticoagulants?|antipsychotics?|"
                       r"anticonvulsants?|birth control|hormone therapy|HRT"),
    ("medical", r"chemo|chemotherapy|radiation (?:therapy|treatment)|dialysis|CPAP|"
                r"glucose monitor|defibrillator|stent"),
    ("medical", r"diagnosed|diagnosis of"),
    ("health", r"blood sugar|sugar levels?|glucose|A1C|blood glucose"),
    ("health", r"heart rhythm|palpitations|chest pains?|racing heart"),
    # Not "hives" alone: bee hives are a hobby.
    ("health", r"allergic|anaphylactic|(?:breaks out in|broke out in|gets|got) hives|"
               r"throat (?:swells|closes|swelling|closing)"),
)

def _alternation(terms: Sequence[str]) -> str:
    # Longest first, so "type 2 diabetes" is reported rather than "diabetes".
    return "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))


_DRUG_RE = re.compile(r"\b(" + _alternation(GENERIC_DRUGS + BRAND_DRUGS) + r")\b", re.IGNORECASE)
_CONTEXT_DRUG_RE = re.compile(
    r"\b(?:" + _DOSING_VERBS + r")\s+(?:\w+\s+)?(" + _alternation(CONTEXT_DRUGS) + r")\b", re.IGNORECASE
)
_CONDITION_RE = re.compile(r"\b(" + _alternation(CONDITIONS) + r")s?\b", re.IGNORECASE)
_USAGE_RE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (cat, re.compile(r"\b(?:" + pat + r")\b", re.IGNORECASE)) for cat, pat in USAGE_PATTERNS
)


def _normalise(text: str) -> str:
    # Curly apostrophes ("Crohn’s") would break the possessive spellings.
    return text.replace("\u2019", "'").replace("\u2018", "'")


def is_drug_name(name: str) -> bool:
    """True when ``name`` is, as a whole, one of the listed generic or brand drug names."""
    return bool(_DRUG_RE.fullmatch(_normalise(name.strip())))


def is_condition_name(name: str) -> bool:
    """True when ``name`` is, as a whole, one of the listed condition names (plural allowed)."""
    return bool(_CONDITION_RE.fullmatch(_normalise(name.strip())))


def lexicon_hits(text: str) -> list[tuple[str, str]]:
    """Every (category, matched text, lowercased) of the lexicon in ``text``: drugs
    first (pharmaceutical), then conditions (health), then usage patterns."""
    t = _normalise(text)
    hits = [("pharmaceutical", m.group(1).lower()) for m in _DRUG_RE.finditer(t)]
    hits += [("pharmaceutical", m.group(1).lower()) for m in _CONTEXT_DRUG_RE.finditer(t)]
    hits += [("health", m.group(0).lower()) for m in _CONDITION_RE.finditer(t)]
    for cat, rx in _USAGE_RE:
        hits += [(cat, m.group(0).lower()) for m in rx.finditer(t)]
    return hits
